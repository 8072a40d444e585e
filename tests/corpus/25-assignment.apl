⍝ Modified, strand and indexed assignment (Dyalog APL 18, ⎕IO=1).
      x←⍳5
      x+←1
      x
2 3 4 5 6
      x,←9
      x
2 3 4 5 6 9
      x[2]←0
      x
2 0 4 5 6 9
      x[2 4]←10 20
      x
2 10 4 20 6 9
      x[1 2]+←100
      x
102 110 4 20 6 9
      x[2 2]←7 8
      x
102 8 4 20 6 9
      x[3]←0.5
      x
102 8 0.5 20 6 9
      m←3 3⍴⍳9
      m[2;]←0
      m
1 2 3
0 0 0
7 8 9
      m[;1]×←10
      m
10 2 3
 0 0 0
70 8 9
      m[1 3;2 3]←2 2⍴¯1
      m
10 ¯1 ¯1
 0  0  0
70 ¯1 ¯1
      (a b)←1 2
      a+b
3
      a b c←5
      a b c
5 5 5
      a b←1 2 3
LENGTH ERROR
      x[7]←1
INDEX ERROR
      x[1 2]←1 2 3
LENGTH ERROR
      y+←1
VALUE ERROR
      f←{x←⍵ ⋄ x[1]←99 ⋄ x}
      f 1 2 3
99 2 3
      {a b←⍵ ⋄ a-b}5 3
2
      c←0
      {c+←⍵ ⋄ 0}¨⍳4
0 0 0 0
      c
10
      {x←⍵ ⋄ x+←1 ⋄ x}5
6
      z←⍳3
      {z[⍵]←0 ⋄ 1}2
1
      z
1 0 3
