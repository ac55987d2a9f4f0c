"""The text toolkit every stage uses: normalising, terms and BM25, question analysis, names."""
