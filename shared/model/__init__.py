"""Pure data: trees, documents, queries, events and ids. Imports nothing else of ours but `shared.text`."""
