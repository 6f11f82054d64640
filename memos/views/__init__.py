"""The product's pages, one module per feature: home, briefs, runs (with their step documents), evidence."""
