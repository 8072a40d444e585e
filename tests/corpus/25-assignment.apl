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
      ⍝ Selective assignment: the items a selection picks.
      s←⍳5
      (2↑s)←0 0
      s
0 0 3 4 5
      (¯2↑s)+←10
      s
0 0 3 14 15
      m←3 4⍴⍳12
      (1 0 1⌿m)←0
      m
0 0 0 0
5 6 7 8
0 0 0 0
      (1 1⍉3 3↑m)←9
      m
9 0 0 0
5 9 7 8
0 0 9 0
      (,m)←⌽⍳12
      m
12 11 10 9
 8  7  6 5
 4  3  2 1
      n←2
      (n↓s)←7
      s
0 0 7 7 7
      (2↑s)←1 2 3
LENGTH ERROR
      (s+1)←3
SYNTAX ERROR
      (8↑s)←0
INDEX ERROR
      {v←⍵ ⋄ (1↓v)×←2 ⋄ v}1 2 3
1 4 6
