"""The files that the book's ``_toc.yml`` lists, in reading order: the one reader of the table of
contents for the scripts, the browser test and the benchmarks.

>>> import tempfile, pathlib
>>> toc = pathlib.Path(tempfile.mkdtemp()) / "_toc.yml"
>>> _ = toc.write_text("format: jb-book\\nroot: intro\\nparts:\\n- caption: I\\n  chapters:\\n"
...                    "  - file: a\\n    sections:\\n    - file: a1\\n  - file: b\\n")
>>> toc_files(toc)
['intro', 'a', 'a1', 'b']
"""
from pathlib import Path

import yaml


def toc_files(toc_path):
    """The ``root`` and every ``file`` entry of a Jupyter Book ``_toc.yml`` (parts, chapters,
    sections, depth first), as written there (usually without suffix)."""
    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections"))
            walk(e.get("chapters"))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return files
