⍝ N-wise reduction: n f/ x folds each window of n consecutive items (right to left);
⍝ a negative n reverses each window; 0 gives the identity 1+≢x times.
      2+/1 2 3 4 5
3 5 7 9
      3+/1 2 3 4 5
6 9 12
      2-/1 4 9 16
¯3 ¯5 ¯7
      ¯2-/1 4 9 16
3 5 7
      2÷/1 2 4 8
0.5 0.5 0.5
      3⌈/3 1 4 1 5 9 2 6
4 4 5 9 9 9
      1+/3 1 4
3 1 4
      0+/1 2 3
0 0 0 0
      0×/1 2 3
1 1 1 1
      ⍴4+/1 2 3
0
      5+/1 2 3
LENGTH ERROR
      2.5+/1 2 3
DOMAIN ERROR
      2+/2 3⍴⍳6
3  5
9 11
      2+⌿3 2⍴⍳6
4  6
8 10
      2+/[1]3 2⍴⍳6
4  6
8 10
      2{⍺+⍵×10}/1 2 3
21 32
      ¯2{⍺+⍵×10}/1 2 3
12 23
      2=/1 1 2 2
1 0 1
      1+/5
5
      0{⍺+⍵}/1 2 3
DOMAIN ERROR
      n←3 ⋄ n×/⍳6
6 24 60 120
⍝ no windows to fold: no identity needed
      ⍴0{⍺+⍵}/0 0⍴0
0 1
⍝ windows of 0 along rows whose count the device computes (a compress): identities
      0 ≠/((⍳5)~2)∘.≥1 2
0 0 0
0 0 0
0 0 0
0 0 0
      0 +/((⍳5)~2)∘.×1 2 3
0 0 0 0
0 0 0 0
0 0 0 0
0 0 0 0
