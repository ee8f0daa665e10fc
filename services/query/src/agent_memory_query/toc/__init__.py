"""The table of contents: years -> ... -> segments, nodes, grips, the term search and pins."""
