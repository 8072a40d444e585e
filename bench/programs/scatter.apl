n←67108864 ⋄ k←1048576 ⍝ small: n←1000 ⋄ k←100
⍝ Indexed assignment at places computed on the device (a scatter into x, in place).
x←1|0.618034×⍳n
i←1+n|7919×⍳k
x[i]←0.5
+/x
