n←67108864 ⍝ small: n←1000
⍝ A running sum of a computed array kept in a name, then its last 32 items.
RA←0.01×100|(⍳n)×7919
+/¯32↑+\RA
