n←67108864 ⍝ small: n←1000
⍝ Counts of 2^20 distinct keys among 2^26 items by key (⌸), in order of first occurrence.
k←1048576|(⍳n)×7919
c←{≢⍵}⌸k
+/c×⍳≢c
