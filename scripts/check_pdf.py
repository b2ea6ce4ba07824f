"""Check the book's PDF (``make pdf``) and render one of its pages to PNG for a look.

    python scripts/check_pdf.py _build/latex/robot-dynamics-interactively.pdf [--page N]

Uses poppler-utils (``pdfinfo``, ``pdfimages``, ``pdftotext``, ``pdftoppm``). Prints the page
count, the size and the number of embedded images, and fails (exit 1) when the PDF is missing,
has fewer pages than ``_toc.yml`` has files, or has no image at all. Outputs that LaTeX cannot show
and that fell back to their text form (an interactive figure or animation without an
``image/png``, an ``IPython.display.HTML`` object) are listed as warnings. The page rendered is
``--page N``, by default the first page with an image after the front matter; it is written
next to the PDF as ``page-N.png``.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_toc import toc_files  # noqa: E402

# The text form of outputs that have no image and no LaTeX (what myst-nb falls back to).
TEXT_FALLBACKS = {
    "interactive figure": re.compile(r"<interactive figure [^>]*>"),
    "animation": re.compile(r"<animation [^>]*>"),
    "HTML object": re.compile(r"<IPython\.core\.display\.HTML object>"),
}


def run(*cmd):
    """stdout of a poppler command; a clear error when poppler-utils is not installed."""
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"check_pdf: {cmd[0]} not found: expected poppler-utils (make pdf installs it)")


def pages_with_images(pdf):
    """Page number -> number of images on it (``pdfimages -list``)."""
    counts = {}
    for line in run("pdfimages", "-list", str(pdf)).splitlines()[2:]:
        fields = line.split()
        if fields and fields[0].isdigit() and fields[2] == "image":
            counts[int(fields[0])] = counts.get(int(fields[0]), 0) + 1
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pdf", type=Path)
    ap.add_argument("--toc", default="_toc.yml", help="the book's table of contents")
    ap.add_argument("--page", type=int, help="page to render (default: first page with an image "
                                             "after the front matter)")
    args = ap.parse_args(argv)

    if not args.pdf.is_file():
        print(f"check_pdf: {args.pdf}: expected the PDF of the book, found no file", file=sys.stderr)
        return 1
    info = run("pdfinfo", str(args.pdf))
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    need = len(toc_files(args.toc))
    images = pages_with_images(args.pdf)
    print(f"{args.pdf}: {pages} pages, {args.pdf.stat().st_size / 1e6:.1f} MB, "
          f"{sum(images.values())} images on {len(images)} pages")
    failed = False
    if pages < need:
        print(f"check_pdf: expected at least {need} pages (one per file in {args.toc}), got "
              f"{pages}", file=sys.stderr)
        failed = True
    if not images:
        print("check_pdf: expected figures, found no image in the PDF", file=sys.stderr)
        failed = True

    text = run("pdftotext", "-layout", str(args.pdf), "-")
    for what, pattern in TEXT_FALLBACKS.items():
        found = pattern.findall(text.replace("\n", " "))
        if found:
            print(f"check_pdf: warning: {len(found)} {what} output(s) shown as text, not as a "
                  f"picture, e.g. {found[0]}")

    page = args.page
    if page is None:                          # skip the title page and table of contents
        body = [p for p in sorted(images) if p > 3]
        page = body[0] if body else min(pages, 5)
    if not 1 <= page <= pages:
        print(f"check_pdf: --page: expected 1..{pages}, got {page}", file=sys.stderr)
        return 1
    out = args.pdf.parent / f"page-{page}"
    run("pdftoppm", "-png", "-r", "110", "-f", str(page), "-l", str(page), "-singlefile",
        str(args.pdf), str(out))
    print(f"page {page} rendered to {out}.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
