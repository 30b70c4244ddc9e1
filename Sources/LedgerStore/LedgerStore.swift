// LedgerStore: see README.md for the layout.
