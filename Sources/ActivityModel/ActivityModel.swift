// ActivityModel: see README.md for the layout.
