#!/usr/bin/env python3
"""One very long activity as JSON Lines, for timing `audit` and `timeline` on it (BENCHMARKS.md, session 28).

Usage: Tools/long-activity.py N MODE > a.jsonl   (activity "A": a request, a token, then N updates over 7 hours)
  plain  each update pushed once, 200
  obs    each update pushed once (200) and then observed by the device
  fail   as obs, every third push a 429
  dead   pushed once each; from the 101st on every push is a 410 (a sender that keeps pushing to a dead token)
  retries  three updates, each pushed N times, every attempt a 429 or a 500 (BENCHMARKS.md, session 36)
  deaths   one update pushed N times, each a 410 that dates the token's death a millisecond earlier (session 36)
  rotations  one update; N new tokens, each followed by a push of it (session 36)
"""
import datetime
import json
import sys

n, mode = int(sys.argv[1]), sys.argv[2]
if mode not in ("plain", "obs", "fail", "dead", "retries", "deaths", "rotations"):
    sys.exit(f"MODE: plain, obs, fail, dead, retries, deaths or rotations, got {mode!r}")
t0 = datetime.datetime(2026, 11, 20, 20, 0, 0, tzinfo=datetime.timezone.utc)
ts0 = int(t0.timestamp())


def at(ms):
    return (t0 + datetime.timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def line(event):
    sys.stdout.write(json.dumps(event) + "\n")


line({"id": "r", "stream": "activity:A", "type": "request", "at": at(0),
      "data": {"attributesType": "T", "attributes": {"k": "v"}, "content": {"state": {"s": 0}}, "pushType": "token"}})
line({"id": "k1", "stream": "activity:A", "type": "token", "at": at(1), "data": {"token": "aa01"}})
if mode == "rotations":
    line({"id": "u0", "stream": "activity:A", "type": "update", "at": at(10),
          "data": {"content": {"state": {"s": 1}}, "timestamp": ts0 + 1}})
    for i in range(n):
        token = "%064x" % (i + 1)
        line({"id": f"k-{i}", "stream": "activity:A", "type": "token", "at": at(1_000 + 2 * i),
              "data": {"token": token}})
        line({"id": f"p-{i}", "stream": "activity:A", "type": "push", "at": at(1_001 + 2 * i), "source": "apns",
              "data": {"refersTo": "u0", "status": 200, "token": token}})
    sys.exit(0)
if mode in ("retries", "deaths"):
    for u in range(3 if mode == "retries" else 1):
        line({"id": f"u{u}", "stream": "activity:A", "type": "update", "at": at(10 + u),
              "data": {"content": {"state": {"s": u}}, "timestamp": ts0 + 1}})
        for i in range(n):
            push = {"refersTo": f"u{u}", "status": 429 if i % 2 else 500, "token": "aa01"}
            if mode == "deaths":
                push.update(status=410, reason="Unregistered", apnsTimestamp=(ts0 + 60) * 1000 - i)
            line({"id": f"p{u}-{i}", "stream": "activity:A", "type": "push", "at": at(60_000), "source": "apns",
                  "data": push})
    sys.exit(0)
step = 7 * 3600 * 1000 // n
for i in range(n):
    ms = 10 + i * step
    ts = ts0 + ms // 1000
    line({"id": f"u{i}", "stream": "activity:A", "type": "update", "at": at(ms),
          "data": {"content": {"state": {"s": i}}, "timestamp": ts}})
    push = {"refersTo": f"u{i}", "status": 200, "token": "aa01"}
    if mode == "fail" and i % 3 == 0:
        push["status"] = 429
    if mode == "dead" and i >= 100:
        push.update(status=410, reason="Unregistered")
    line({"id": f"p{i}", "stream": "activity:A", "type": "push", "at": at(ms + 1), "source": "apns", "data": push})
    if mode in ("obs", "fail"):
        line({"id": f"o{i}", "stream": "activity:A", "type": "observe", "at": at(ms + 2), "source": "device",
              "data": {"activityState": "active", "contentTimestamp": ts}})
