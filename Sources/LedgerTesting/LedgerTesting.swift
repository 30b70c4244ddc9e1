// LedgerTesting: see README.md for the layout.
