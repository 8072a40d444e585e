n←2048 ⍝ small: n←96
⍝ Walks of three steps in a graph: integer matrix products of its adjacency matrix.
A←0=7|(n n⍴⍳13)×⍉n n⍴⍳11
P←A+.×A
W←P+.×A
+/,W
