"""`capdoctor fallback`: from a capacity verdict to the fallback pool and retry policy the user's tools load.

Modules: `pool` (a report → the ranked models that answered), `client` (which client the user runs, hence
the default format, and the next step that names the command), `formats/` (one module per output format),
`merge` (writing into an existing file, comments kept), `command` (the command's flow). This package is
imported only by the `fallback` command and, for the next step, lazily by the models rules; like every
package `__init__` here it imports none of its submodules (tests/test_imports.py).
"""
