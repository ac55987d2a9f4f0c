"""Ingesting many files: finding them in folders, indexing them on several processes, and
sending them to a gateway."""
