#!/usr/bin/env python3
"""Prints the fenced code block that follows `<!-- tested: NAME ... -->` in a Markdown file, so that
a test runs exactly what the README shows.  usage: readme_block.py README.md NAME"""
import re
import sys

text = open(sys.argv[1]).read()
m = re.search(r"<!-- tested: %s\b[^>]*-->\s*\n```[a-z]*\n(.*?)\n```" % re.escape(sys.argv[2]), text, re.S)
if not m:
    sys.exit("readme_block: no block marked '<!-- tested: %s -->' in %s" % (sys.argv[2], sys.argv[1]))
print(m.group(1))
