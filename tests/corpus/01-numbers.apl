⍝ Literals, strands and display (Dyalog APL, ⎕IO=1).
      42
42
      ¯3
¯3
      1 2 3
1 2 3
      ¯1 0 1
¯1 0 1
      1e6
1000000
      2.5E¯3
0.0025
      1.5
1.5
      .5
0.5
      1E¯7
1E¯7
⍝ integral values are exact integers (Dyalog shows 1.5E10)
      1.5E10
15000000000
      1.5E20
1.5E20
      ⍬
      0.25 ¯0.5
0.25 ¯0.5
      1 2.5 3
1 2.5 3
⍝ integral floats display without a point
      2.0 3.0
2 3
      (1+1) 3
2 3
⍝ a numeric literal is one token: indexing applies to all of it
      1 2 3[2]
2
      x←7
⍝ a strand is one level: x 1 2 has three items (Dyalog; x (1 2) has two)
      x 1 2
7 1 2
      x (1 2)
7  1 2
      x 1
7 1
      x←5
      x
5
      y←x+1 ⋄ y×2
12
      2 3⍴⍳6
1 2 3
4 5 6
      2 2⍴1 2.5 3 4
1 2.5
3 4
      3 2⍴1 ¯10 100 2 3 ¯4
  1 ¯10
100   2
  3  ¯4
