"""Page CSS and JavaScript (a package so that setuptools ships the files)."""
