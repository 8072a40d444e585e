⍝ Each ¨ and commute ⍨.
      -¨1 2 3
¯1 ¯2 ¯3
      {⍵×⍵}¨1 2 3
1 4 9
      1 2 3+¨4 5 6
5 7 9
      10{⍺-⍵}¨1 2 3
9 8 7
      {⍵+1}¨2 2⍴⍳4
2 3
4 5
      {⍵+1}¨⍬
⍝ results of each must be scalars: arrc has no nested arrays (Dyalog nests them)
      {⍳⍵}¨2 3
 1 2  1 2 3
      1 2+¨1 2 3
LENGTH ERROR
      5-⍨3
¯2
      2÷⍨10
5
      +⍨3
6
      ×⍨1 2 3
1 4 9
      ,⍨1 2
1 2 1 2
      2 3⍴⍨1 2
2 3
      3⍴⍨2
3 3
      +/¨1 2 3
1 2 3
      (+/)1 2 3
6
⍝ operands that compute arrays from their arguments (run item by item)
      {+/⍺,⍵}/3 1 4 1 5
14
      {⌈/⍺ ⍵}\3 1 4 1 5
3 3 4 4 5
      {+/⍳⍵}¨3 1 4
6 1 10
      {+/⍺,⍵}⌿2 3⍴⍳6
5 7 9
