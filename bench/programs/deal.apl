n←16777216 ⍝ small: n←1000
⍝ A random permutation (n?n: a roll of keys and a radix grade), its fixed points.
p←n?n
+/p=⍳n
