#!/usr/bin/env python3
"""Every relative link of the built book (docs/book/*.html) resolves from a checkout: the file
exists and, for a page of the book, the anchor is one of its ids. Links to the repository's
files (../../src/…) resolve because docs/book/ is as deep as docs/src/. Network links are not
checked. Exit 1 with the broken links listed."""
import glob
import html
import os
import re
import sys

book = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "book")
pages = sorted(glob.glob(os.path.join(book, "*.html")))
if len(pages) < 15:
    sys.exit(f"docs/book has {len(pages)} pages: run `mdbook build docs` first")
ids = {}


def ids_of(path):
    if path not in ids:
        with open(path, encoding="utf-8") as f:
            ids[path] = set(re.findall(r'id="([^"]+)"', f.read()))
    return ids[path]


broken, checked = [], 0
for page in pages:
    if os.path.basename(page) == "404.html":  # served from the site root, links absolute
        continue
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for href in re.findall(r'href="([^"]+)"', text):
        href = html.unescape(href)
        if re.match(r"^[a-z]+:", href):
            continue
        checked += 1
        path, _, anchor = href.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            broken.append(f"{os.path.basename(page)}: {href} (no such file)")
        elif anchor and dest.endswith(".html") and anchor not in ids_of(dest):
            broken.append(f"{os.path.basename(page)}: {href} (no such anchor)")
print(f"book links: {checked} relative links checked, {len(broken)} broken")
for line in broken:
    print("  " + line)
sys.exit(1 if broken else 0)
