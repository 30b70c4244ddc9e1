-- Apps are namespaces (SPEC §2): a stream and an event id belong to one app. Before this migration, the code
-- (`EventStore.moveToNamespaces`) stores every stream listed here, and the ids of its events, qualified by
-- its app (app, U+001F, name) and sets store_counters.namespaced_from, so rows written before keep
-- verifying against the hash of their bare names. Ownership is then part of each name, not a table.
DROP TABLE stream_owners;
-- Projection rows hold qualified names now: refill them from the log when the ledger opens.
DELETE FROM activities;
DELETE FROM tokens;
DELETE FROM channel_members;
DELETE FROM start_tokens;
DELETE FROM projection_positions WHERE name = 'activities';
