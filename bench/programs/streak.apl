n←67108864 ⍝ small: n←1000
⍝ The longest run of increasing items: a max-scan of run starts.
x←1000|(⍳n)×3
b←0,1↓x>¯1⌽x
i←⍳n
s←⌈\i×~b
⌈/1+i-s
