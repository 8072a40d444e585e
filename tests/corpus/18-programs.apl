⍝ Multi-statement programs and names across lines.
      v←3 1 4 1 5 9 2 6
      (+/v)÷≢v
3.875
      ⌈/v
9
      v[⍋v]
1 1 2 3 4 5 6 9
      +/v=1
2
      m←3 3⍴⍳9
      +/m×m
14 77 194
      (+/m)+.×1 1 1
45
      n←⍉m ⋄ n[1;]
1 4 7
      sq←{⍵×⍵} ⋄ +/sq v
173
      ∨/v>8
1
      {(⍵>2)/⍵}v
3 4 5 9 6
      z←⍬ ⋄ ⍴z
0
      +/+/m
45
