// Ledger: see README.md for the layout.
