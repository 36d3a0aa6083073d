"""pytest setup: the package under test is the one on PYTHONPATH (the build
tree's python_packages, or an install's dist-packages)."""
