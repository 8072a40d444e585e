n←67108864 ⍝ small: n←1000
⍝ Mean, variance, and the largest z-score.
x←(1000|(⍳n)×7919)÷1000
m←(+/x)÷n
d←x-m
v←(+/d×d)÷n
z←d÷v*0.5
⌈/|z
