⍝ Bracket indexing and INDEX ERROR.
      x←10 20 30 40 50
      x[1]
10
      x[5 1]
50 10
      x[2 2⍴1 2 3 4]
10 20
30 40
      x[⍳0]
      m←3 4⍴⍳12
      m[2;3]
7
      m[2;]
5 6 7 8
      m[;1]
1 5 9
      m[1 3;2 4]
 2  4
10 12
      m[;]
1  2  3  4
5  6  7  8
9 10 11 12
      x[6]
INDEX ERROR
      x[0]
INDEX ERROR
      m[1]
RANK ERROR
      m[4;1]
INDEX ERROR
      (⍳5)[3]
3
      c←2 2 2⍴⍳8
      c[2;1;2]
6
      c[;2;]
3 4
7 8
      x[1.5]
DOMAIN ERROR
