"""Page templates (a package so that setuptools ships the *.html files)."""
