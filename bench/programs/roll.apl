n←67108864 ⍝ small: n←1000
⍝ 2^26 dice, thrown on the device (Philox4x32-10), then their mean.
x←?n⍴6
(+/x)÷n
