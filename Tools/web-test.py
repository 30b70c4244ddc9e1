#!/usr/bin/env python3
"""The incident view in a real browser (headless Chromium through chromedriver), against the real binary.

Seeds a ledger (a ride with token rotation, a 410, a stale date, an end with a dismissal deadline, hostile
content; a channel with subscribers; an activity with 10k events; a channel update with 100k subscribers),
starts `serve`, and checks: the key form (sessionStorage, never the URL), deep links at two times against
`state --at`, the slider by keyboard, the delivery matrix against `audit`, the token history, the update view
against `audit --update`, search, the self-contained report from file:// with its
slider, that hostile content stays text, and that no page logs a console error. Screenshots go to --artifacts.
With --scale (make bench) it also times the first render of a 10k-event activity and of a 100k-subscriber update.

    python3 Tools/web-test.py --binary .build/debug/activity-ledger --artifacts .build/web-artifacts
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

APP = "com.example.rides"
HOSTILE = "</script><img src=x onerror=\"window.__pwned=1\"><b>bold</b>"
BIG_EVENTS = 10_000
SUBSCRIBERS = 100_000


def t(hh, mm, ss=0):
    return f"2026-11-20T{hh:02d}:{mm:02d}:{ss:02d}.000Z"


def unix(hh, mm, ss=0):
    return 1795132800 + hh * 3600 + mm * 60 + ss  # 2026-11-20T00:00:00Z


def seed_events():
    """The scenario (SPEC §2 events), in the order they are imported."""
    ride = "activity:RIDE-8812"
    e = []

    def add(id, stream, type, at, data, source="server"):
        e.append({"id": id, "stream": stream, "type": type, "at": at, "source": source, "data": data})

    add("r-8812", ride, "request", t(21, 0), {
        "attributesType": "RideAttributes",
        "attributes": {"rideID": "RIDE-8812", "pickup": "253 Hayes St", "note": HOSTILE},
        "content": {"state": {"status": "driverAssigned", "etaSeconds": 600, "rating": "__RATING__", "big": 12345678901234567890,
                              "zero": -0.0, "driver": {"name": "Omar", "vehicle": {"plate": "7E6DA"}}},
                    "staleDate": t(21, 20), "relevanceScore": 80},
        "pushType": "token", "installation": "inst-7", "origin": "app"}, "app")
    add("k1-8812", ride, "token", t(21, 0, 1), {"token": "aa11bb22cc33", "environment": "production"}, "app")
    add("u1-8812", ride, "update", t(21, 5), {"content": {"state": {"status": "enRoute", "etaSeconds": 300}, "staleDate": t(21, 30)}, "timestamp": unix(21, 5)})
    add("p1-8812", ride, "push", t(21, 5, 1), {"refersTo": "u1-8812", "status": 200, "token": "aa11bb22cc33", "apnsId": "A1"}, "apns")
    add("o1-8812", ride, "observe", t(21, 5, 10), {"activityState": "active", "contentTimestamp": unix(21, 5)}, "device")
    add("k2-8812", ride, "token", t(21, 8), {"token": "dd44ee55ff66", "environment": "production"}, "app")
    add("u2-8812", ride, "update", t(21, 10), {"content": {"state": {"status": "arriving", "etaSeconds": 120}, "staleDate": t(21, 13)}, "timestamp": unix(21, 10)})
    add("p2-8812", ride, "push", t(21, 10, 1), {"refersTo": "u2-8812", "status": 410, "reason": "Unregistered", "token": "aa11bb22cc33", "apnsTimestamp": (unix(21, 9)) * 1000}, "apns")
    add("p3-8812", ride, "push", t(21, 10, 2), {"refersTo": "u2-8812", "status": 200, "token": "dd44ee55ff66"}, "apns")
    add("u3-8812", ride, "update", t(21, 16), {"content": {"state": {"status": "arrived", "etaSeconds": 0}}, "timestamp": unix(21, 16)})
    add("p4-8812", ride, "push", t(21, 16, 1), {"refersTo": "u3-8812", "status": 400, "reason": "BadDeviceToken", "token": "dd44ee55ff66"}, "apns")
    add("e1-8812", ride, "end", t(21, 20), {"content": {"state": {"status": "dropped off"}}, "timestamp": unix(21, 20),
                                          "dismissalPolicy": {"after": t(21, 40)}})
    add("p5-8812", ride, "push", t(21, 20, 1), {"refersTo": "e1-8812", "status": 200, "token": "dd44ee55ff66"}, "apns")
    # A channel with five subscribers and one update that reaches them.
    for i in range(1, 6):
        add(f"r-game-{i}", f"activity:GAME-{i}", "request", t(20, 0, i), {
            "attributesType": "ScoreAttributes", "attributes": {"match": "final"},
            "content": {"state": {"home": 0, "away": 0}}, "pushType": {"channel": "CH-FINAL"}}, "app")
    add("cu1", "channel:CH-FINAL", "update", t(20, 30), {"content": {"state": {"home": 1, "away": 0}}, "timestamp": unix(20, 30)})
    add("cp1", "channel:CH-FINAL", "push", t(20, 30, 1), {"refersTo": "cu1", "status": 200, "channel": "CH-FINAL"}, "apns")
    add("o-game-1", "activity:GAME-1", "observe", t(20, 31), {"activityState": "active", "contentTimestamp": unix(20, 30)}, "device")
    return e


def scale_events(out):
    """An activity with 10k events and a channel update with 100k subscribers, written to `out`."""
    with open(out, "w") as f:
        w = lambda event: f.write(json.dumps(event, separators=(",", ":")) + "\n")
        big = "activity:BIG-1"
        w({"id": "r-big", "stream": big, "type": "request", "at": "2026-11-21T08:00:00.000Z", "data": {
            "attributesType": "DeliveryAttributes", "attributes": {"order": "BIG-1"},
            "content": {"state": {"step": 0}}, "pushType": "token"}})
        w({"id": "k-big", "stream": big, "type": "token", "at": "2026-11-21T08:00:00.500Z", "data": {"token": "beef0001"}})
        base = 1795248000  # 2026-11-21T08:00:00Z
        for i in range(1, (BIG_EVENTS - 2) // 2 + 1):
            second = i * 2  # 2 s apart: inside the 8 h window
            at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + second)) + ".000Z"
            w({"id": f"u-big-{i}", "stream": big, "type": "update", "at": at,
               "data": {"content": {"state": {"step": i}}, "timestamp": base + second}})
            at2 = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + second)) + ".500Z"
            w({"id": f"p-big-{i}", "stream": big, "type": "push", "at": at2, "source": "apns",
               "data": {"refersTo": f"u-big-{i}", "status": 200 if i % 7 else 429, "reason": None if i % 7 else "TooManyRequests", "token": "beef0001"}})
        for i in range(SUBSCRIBERS):
            w({"id": f"r-fan-{i}", "stream": f"activity:FAN-{i:06d}", "type": "request", "at": "2026-11-21T09:00:00.000Z",
               "data": {"attributesType": "ScoreAttributes", "attributes": {"fan": i}, "content": {"state": {"home": 0}},
                        "pushType": {"channel": "CH-ALL"}}})
        w({"id": "cu-all", "stream": "channel:CH-ALL", "type": "update", "at": "2026-11-21T09:30:00.000Z",
           "data": {"content": {"state": {"home": 1}}, "timestamp": 1795253400}})


def strip_nulls(event):
    if isinstance(event, dict):
        return {k: strip_nulls(v) for k, v in event.items() if v is not None}
    return event


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def literal_json(text):
    """JSON with number literals kept as their text (as the page shows them)."""
    return json.loads(text, parse_float=lambda s: ("num", s), parse_int=lambda s: ("num", s),
                      parse_constant=lambda s: ("num", s))


def flatten(value, path=""):
    out = []
    if isinstance(value, dict):
        if not value:
            out.append((path or "(empty)", "{}"))
        for k, v in value.items():
            out += flatten(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        if not value:
            out.append((path or "(empty)", "[]"))
        for i, v in enumerate(value):
            out += flatten(v, f"{path}[{i}]")
    elif isinstance(value, tuple):
        out.append((path or "(value)", value[1]))
    elif value is None:
        out.append((path or "(value)", "null"))
    elif value is True or value is False:
        out.append((path or "(value)", "true" if value else "false"))
    else:
        out.append((path or "(value)", value))
    return out


class Run:
    def __init__(self, args):
        self.args = args
        self.binary = os.path.abspath(args.binary)
        self.dir = tempfile.mkdtemp(prefix="ledger-web-")
        self.db = os.path.join(self.dir, "ledger.sqlite")
        self.artifacts = os.path.abspath(args.artifacts)
        os.makedirs(self.artifacts, exist_ok=True)
        self.server = None
        self.driver = None
        self.passed = []

    def cli(self, *arguments, check_exit=True):
        result = subprocess.run([self.binary, *arguments, "--db", self.db], capture_output=True, text=True)
        if check_exit and result.returncode != 0:
            raise Failure(f"activity-ledger {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        return result

    def cli_json(self, *arguments):
        return self.cli(*arguments, "--json", "--app", APP).stdout

    def setup(self):
        seed = os.path.join(self.dir, "seed.jsonl")
        with open(seed, "w") as f:
            for event in seed_events():
                # Python would write 4.90 as 4.9: the literal goes in as text, to check it comes out as sent.
                f.write(json.dumps(event, separators=(",", ":")).replace('"__RATING__"', "4.90") + "\n")
        self.cli("import", seed, "--app", APP)
        if self.args.scale:
            scale = os.path.join(self.dir, "scale.jsonl")
            scale_events(scale)
            # json.dumps wrote "reason": null for 200s: drop them (a null reason is refused as a wrong type).
            with open(scale) as f, open(scale + ".clean", "w") as g:
                for line in f:
                    g.write(json.dumps(strip_nulls(json.loads(line)), separators=(",", ":")) + "\n")
            started = time.time()
            self.cli("import", scale + ".clean", "--app", APP)
            print(f"  seeded {BIG_EVENTS} + {SUBSCRIBERS + 1} scale events in {time.time() - started:.1f} s", flush=True)
        self.key = self.cli("keys", "create", "--app", APP, "--scope", "read").stdout.strip()
        log = open(os.path.join(self.artifacts, "serve.log"), "w")
        self.server = subprocess.Popen(
            [self.binary, "serve", "--db", self.db, "--host", "127.0.0.1", "--port", "0", "--keep-unsealed", "-1"],
            stdout=subprocess.PIPE, stderr=log, text=True)
        deadline = time.time() + 30
        self.base = None
        while time.time() < deadline and self.base is None:
            line = self.server.stdout.readline()
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            if m:
                self.base = m.group(1)
        check(self.base, "serve did not report its port")
        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1800",
                     "--disable-gpu", "--no-first-run"]:
            options.add_argument(flag)
        for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser"]:
            if os.path.exists(path):
                options.binary_location = path
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(30)

    def teardown(self):
        if self.driver:
            self.driver.quit()
        if self.server:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- helpers ----
    def wait(self, predicate, timeout=15, message="timed out"):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: predicate())
        except Exception:
            self.shot("timeout")
            raise Failure(message)

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(self.artifacts, f"{name}.png"))

    def console_errors(self):
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    def no_console_errors(self, where):
        errors = self.console_errors()
        check(not errors, f"{where}: console errors: {errors}")

    def card_ready(self):
        card = self.driver.find_elements(By.ID, "card")
        if not card or card[0].get_attribute("aria-busy"):
            return False
        return bool(self.driver.find_elements(By.ID, "card-asof"))

    def card(self):
        """The card as shown: its facts and its content rows."""
        d = self.driver
        asof = d.find_element(By.ID, "card-asof").text
        missing = d.find_elements(By.ID, "card-missing")
        if missing:
            return {"asOf": asof, "missing": missing[0].text}
        facts = {el.get_attribute("data-field"): el.text for el in d.find_elements(By.CSS_SELECTOR, "#card dd[data-field]")}
        rows = lambda table: [(tr.find_element(By.TAG_NAME, "th").text, tr.find_element(By.TAG_NAME, "td").text)
                              for tr in d.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")]
        return {"asOf": asof, "facts": facts, "content": rows("card-content"), "attributes": rows("card-attributes")}

    def expect_card_equals_state(self, where):
        shown = self.card()
        at = shown["asOf"]
        result = self.cli("state", "RIDE-8812", "--at", at, "--json", "--app", APP, check_exit=False)
        if result.returncode != 0:
            check("missing" in shown, f"{where}: state --at {at} failed ({result.stderr.strip()}) but the card shows {shown}")
            return at, None
        state = literal_json(result.stdout)
        check("facts" in shown, f"{where}: the card at {at} is missing; state --at says {state['phase'][1] if isinstance(state['phase'], tuple) else state['phase']}")
        facts = shown["facts"]
        reason = f"dismissed by {state['dismissedBy']}" if state["dismissedBy"] else f"ended by {state['endedBy']}" if state["endedBy"] else "—"
        expected = {
            "phase": state["phase"], "reason": reason,
            "staleDate": state["staleDate"] or "none", "token": state["token"] or "none",
            "tokenDead": ("no (dead: APNs 410)" if state["tokenDead"] else "yes") if state["token"] else "—",
            "displayedTimestamp": state["displayed"]["timestamp"][1] if state["displayed"] else "nothing displayed",
            "events": state["events"][1],
        }
        for name, value in expected.items():
            check(facts.get(name) == value, f"{where}: card {name} at {at} is {facts.get(name)!r}, state --at says {value!r}")
        if state["displayed"]:
            check(shown["content"] == flatten(state["displayed"]["state"]),
                  f"{where}: displayed content at {at}: card {shown['content']} vs state --at {flatten(state['displayed']['state'])}")
        check(shown["attributes"] == flatten(state["attributes"]), f"{where}: attributes differ: {shown['attributes']}")
        return at, state

    def open(self, path):
        self.driver.get(self.base + path)

    # ---- the checks ----
    def test_key_form(self):
        d = self.driver
        self.open("/")
        self.wait(lambda: d.find_elements(By.ID, "api-key"), message="no key field at /")
        field = d.find_element(By.ID, "api-key")
        check(field.get_attribute("type") == "password", "the key field is not a password field")
        field.send_keys(self.key)
        field.send_keys(Keys.ENTER)
        self.wait(lambda: "key set" in d.find_element(By.ID, "key-state").text, message="the key was not taken")
        check(d.execute_script(f"return sessionStorage.getItem('activityLedger.apiKey')") == self.key, "key not in sessionStorage")
        check(d.execute_script("return localStorage.length") == 0, "something was put in localStorage")
        check(self.key not in d.current_url, "the key is in the URL")
        self.shot("home")
        self.no_console_errors("/")

    def test_deep_links(self):
        d = self.driver
        seen = set()
        for at in [t(21, 14, 30), t(21, 35)]:
            self.open(f"/activities/RIDE-8812?at={at}")
            self.wait(self.card_ready, message=f"no card for ?at={at}")
            shown_at, state = self.expect_card_equals_state(f"deep link at {at}")
            check(shown_at == at, f"deep link ?at={at} shows the card as of {shown_at}")
            seen.add(state["phase"])
            self.shot(f"activity-at-{at[11:19].replace(':', '')}")
            check(self.key not in d.current_url, "the key is in the URL")
        check(seen == {"stale", "ended"}, f"the two times should show stale and ended, saw {seen}")
        # Unix seconds as the API takes them; a time that is none is said, and the view still opens.
        self.open(f"/activities/RIDE-8812?at={unix(21, 14, 30)}")
        self.wait(lambda: self.card_ready() and d.find_element(By.ID, "card-asof").text == t(21, 14, 30),
                  message="?at= in Unix seconds")
        self.open("/activities/RIDE-8812?at=yesterday")
        self.wait(self.card_ready, message="a bad ?at= broke the view")
        check("not an RFC 3339 time" in d.find_element(By.ID, "status").text, "a bad ?at= is not said")
        check(d.execute_script("return window.__pwned === undefined"), "hostile content ran as HTML")
        note = [row for row in self.card()["attributes"] if row[0] == "note"]
        check(note == [("note", HOSTILE)], f"hostile attribute not shown as text: {note}")
        self.no_console_errors("deep links")

    def test_slider_keyboard(self):
        d = self.driver
        self.open(f"/activities/RIDE-8812?at={t(21, 0)}")
        self.wait(self.card_ready, message="no card")
        slider = d.find_element(By.ID, "slider")
        d.execute_script("arguments[0].focus()", slider)
        before = d.find_element(By.ID, "slider-time").text
        phases = set()
        for _ in range(40):
            previous = d.find_element(By.ID, "card-asof").text
            if float(slider.get_attribute("value")) >= float(slider.get_attribute("max")):
                break
            slider.send_keys(Keys.ARROW_RIGHT)
            self.wait(lambda: self.card_ready() and d.find_element(By.ID, "card-asof").text != previous,
                      message="the card did not follow the slider")
            at, state = self.expect_card_equals_state("slider")
            if state:
                phases.add(state["phase"])
        check(d.find_element(By.ID, "slider-time").text != before, "arrow keys did not move the slider")
        check({"active", "stale", "ended", "dismissed"} <= phases, f"stepping through changes should pass every phase, saw {phases}")
        check("at=" in d.current_url, "the slider does not keep the deep link")
        self.no_console_errors("slider")

    def test_delivery_matrix(self, source="page"):
        d = self.driver
        audit = json.loads(self.cli_json("audit", "RIDE-8812"))
        rows = d.find_elements(By.CSS_SELECTOR, "#delivery-table tbody tr")
        shown = [(r.get_attribute("data-event"), r.get_attribute("data-verdict"), r.get_attribute("data-reason")) for r in rows]
        expected = [(x["event"], x["verdict"], x["reason"] or "") for x in audit["deliveries"]]
        check(shown == expected, f"{source}: delivery matrix {shown} differs from audit {expected}")
        texts = [r.find_elements(By.TAG_NAME, "td")[4].text for r in rows]
        for (event, verdict, reason), text in zip(expected, texts):
            check(verdict in text and (reason in text), f"{source}: verdict of {event} not told in text: {text!r}")
        verdicts = {v for _, v, _ in expected}
        check({"applied", "rejected"} <= verdicts, f"scenario should give applied and rejected, got {verdicts}")

    def test_tokens(self, source="page"):
        rows = self.driver.find_elements(By.CSS_SELECTOR, "#tokens tbody tr")
        tokens = [(r.get_attribute("data-token"), r.find_elements(By.TAG_NAME, "td")[3].text) for r in rows]
        check([tk for tk, _ in tokens] == ["aa11bb22cc33", "dd44ee55ff66"], f"{source}: token history {tokens}")
        check(tokens[0][1].startswith("✕ dead from 2026-11-20T21:09:00"), f"{source}: first token's death: {tokens[0][1]}")
        check(tokens[1][1] == "alive", f"{source}: second token: {tokens[1][1]}")

    def test_activity_panels(self):
        self.open("/activities/RIDE-8812")
        self.wait(self.card_ready, message="no card")
        self.test_delivery_matrix()
        self.test_tokens()
        marks = self.driver.find_elements(By.CSS_SELECTOR, "#axis .mark")
        check(len(marks) == 13, f"one mark per event expected (13), got {len(marks)}")
        bands = {b.get_attribute("data-phase") for b in self.driver.find_elements(By.CSS_SELECTOR, "#axis .band")}
        check({"active", "stale", "ended", "dismissed"} <= bands, f"phase bands: {bands}")
        # The JSON of an answer, as returned.
        button = self.driver.find_element(By.CSS_SELECTOR, "#card .json-link")
        button.click()
        pre = self.driver.find_element(By.CSS_SELECTOR, "#card pre.json")
        self.wait(lambda: pre.is_displayed() and "GET /v1/activities/RIDE-8812/state?at=" in pre.text, message="no state JSON")
        self.shot("activity-now")
        self.no_console_errors("activity panels")

    def test_update_view(self):
        d = self.driver
        self.open("/updates/cu1")
        self.wait(lambda: d.find_elements(By.CSS_SELECTOR, "#reach-table tbody tr"), message="no reach rows")
        audit = json.loads(self.cli_json("audit", "--update", "cu1"))
        shown = [(r.get_attribute("data-activity"), r.get_attribute("data-verdict")) for r in d.find_elements(By.CSS_SELECTOR, "#reach-table tbody tr")]
        expected = [(x["activity"], x["verdict"]) for x in audit["deliveries"]]
        check(shown == expected, f"update view {shown} differs from audit --update {expected}")
        check(("GAME-1", "applied") in shown, f"GAME-1 saw cu1: {shown}")
        self.shot("update-cu1")
        self.no_console_errors("update view")

    def test_search(self):
        d = self.driver
        for kind, text, expect in [("tokenPrefix", "dd44", "RIDE-8812"), ("installation", "inst-7", "RIDE-8812"), ("channel", "CH-FINAL", "GAME-3")]:
            self.open("/")
            self.wait(lambda: d.find_elements(By.ID, "search-text"), message="no search field")
            d.find_element(By.CSS_SELECTOR, f"#search-kind option[value='{kind}']").click()
            d.find_element(By.ID, "search-text").send_keys(text + Keys.ENTER)
            self.wait(lambda: d.find_elements(By.CSS_SELECTOR, "#search-results li a"), message=f"no results for {kind}={text}")
            names = [a.text for a in d.find_elements(By.CSS_SELECTOR, "#search-results li a")]
            check(expect in names, f"search {kind}={text}: {names}")
        self.shot("search")
        self.open("/")
        self.wait(lambda: d.find_elements(By.ID, "search-text"), message="no search field")
        d.find_element(By.ID, "search-text").send_keys("RIDE-8812" + Keys.ENTER)
        self.wait(lambda: "/activities/RIDE-8812" in d.current_url and self.card_ready(), message="search by id did not open it")
        self.no_console_errors("search")

    def test_scale(self):
        d = self.driver
        for path, ready, name in [
            ("/activities/BIG-1", lambda: self.card_ready() and d.find_elements(By.CSS_SELECTOR, "#delivery-table tbody tr"), "10k-event activity"),
            ("/updates/cu-all", lambda: len(d.find_elements(By.CSS_SELECTOR, "#reach-table tbody tr")) >= 100, "100k-subscriber update"),
        ]:
            self.open("/")  # the page is loaded; time the view itself from navigation
            started = time.time()
            self.open(path)
            self.wait(ready, timeout=30, message=f"{name} did not render")
            elapsed = time.time() - started
            print(f"  {name}: first page rendered in {elapsed:.2f} s", flush=True)
            self.shot(name.replace(" ", "-"))
            # Speed is measured, not asserted: the figure goes to BENCHMARKS.md (make bench).
            print(f"  {name}: {'meets' if elapsed < 2.0 else 'MISSES'} the < 2 s target", flush=True)
            self.no_console_errors(name)
        info = d.find_element(By.CSS_SELECTOR, "main .summary").text
        check(f"{SUBSCRIBERS} addressed" in info, f"subscriber count not shown: {info}")

    def test_report(self):
        d = self.driver
        out = os.path.join(self.artifacts, "RIDE-8812.html")
        self.cli("report", "RIDE-8812", "--app", APP, "--out", out)
        bad = self.cli("report", "RIDE-8812", "--app", APP, "--from", "1e300", "--out", out + ".bad", check_exit=False)
        check(bad.returncode == 2 and not os.path.exists(out + ".bad") and "from" in bad.stderr, f"bad --from: {bad.returncode} {bad.stderr}")
        unknown = self.cli("report", "NOPE", "--app", APP, "--out", out + ".nope", check_exit=False)
        check(unknown.returncode != 0 and not os.path.exists(out + ".nope") and "NOPE" in unknown.stderr,
              f"unknown activity: {unknown.returncode} {unknown.stderr}")
        d.get("file://" + out)
        self.wait(self.card_ready, message="the report shows no card")
        self.test_delivery_matrix("report")
        self.test_tokens("report")
        check(d.execute_script("return window.__pwned === undefined"), "hostile content ran in the report")
        slider = d.find_element(By.ID, "slider")
        phases = set()
        # Two chosen times, then every change by keyboard.
        for at in [t(21, 14, 30), t(21, 35)]:
            d.execute_script("const s = document.getElementById('slider'); s.value = Date.parse(arguments[0]); s.dispatchEvent(new Event('input'));", at)
            self.wait(lambda: d.find_element(By.ID, "card-asof").text == at, message=f"report slider did not move to {at}")
            _, state = self.expect_card_equals_state(f"report at {at}")
            phases.add(state["phase"])
            self.shot(f"report-at-{at[11:19].replace(':', '')}")
        check(phases == {"stale", "ended"}, f"report at the two times: {phases}")
        slider.send_keys(Keys.HOME)
        for _ in range(40):
            previous = d.find_element(By.ID, "card-asof").text
            if float(slider.get_attribute("value")) >= float(slider.get_attribute("max")):
                break
            slider.send_keys(Keys.ARROW_RIGHT)
            self.wait(lambda: d.find_element(By.ID, "card-asof").text != previous, message="report slider stuck")
            self.expect_card_equals_state("report slider")
        self.no_console_errors("report")

    def test_bad_key(self):
        d = self.driver
        self.open("/")
        d.execute_script("sessionStorage.setItem('activityLedger.apiKey', 'al_not_a_key')")
        self.open("/activities/RIDE-8812")
        self.wait(lambda: d.find_elements(By.ID, "load-error"), message="no error for a bad key")
        check("401" in d.find_element(By.ID, "load-error").text, "a bad key should say 401")
        self.driver.get_log("browser")  # the 401 itself is logged by the browser as a failed resource
        d.execute_script(f"sessionStorage.setItem('activityLedger.apiKey', '{self.key}')")

    def run(self):
        tests = [self.test_key_form, self.test_deep_links, self.test_slider_keyboard, self.test_activity_panels,
                 self.test_update_view, self.test_search, self.test_report, self.test_bad_key]
        if self.args.scale:
            tests.insert(6, self.test_scale)
        failed = 0
        for test in tests:
            started = time.time()
            try:
                test()
                print(f"ok   {test.__name__} ({time.time() - started:.1f} s)", flush=True)
            except Exception as error:
                failed += 1
                print(f"FAIL {test.__name__}: {error}", flush=True)
                if not isinstance(error, Failure):
                    traceback.print_exc()
                try:
                    self.shot(f"failed-{test.__name__}")
                except Exception:
                    pass
        return failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/activity-ledger")
    parser.add_argument("--artifacts", default=".build/web-artifacts")
    parser.add_argument("--scale", action="store_true",
                        help="also seed a 10k-event activity and a 100k-subscriber update and time their first render "
                             "(make bench, on the release binary; the SPEC target is < 2 s each)")
    args = parser.parse_args()
    run = Run(args)
    try:
        run.setup()
        failed = run.run()
    finally:
        run.teardown()
    print(f"web tests: {'FAILED' if failed else 'passed'}; screenshots in {args.artifacts}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
