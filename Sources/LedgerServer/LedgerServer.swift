// LedgerServer: see README.md for the layout.
