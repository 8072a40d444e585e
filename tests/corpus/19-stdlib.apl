⍝!stdlib
⍝ The standard library (stdlib/*.apl).
      mean 1 2 3 4
2.5
      variance 2 4 4 4 5 5 7 9
4
      stddev 2 4 4 4 5 5 7 9
2
      range 3 1 4 1 5
4
      runmax 3 1 4 1 5 9 2 6
3 3 4 4 5 9 9 9
      cumsum 1 2 3 4
1 3 6 10
      1 2 3 dot 4 5 6
32
      norm 3 4
5
      normalize 3 4
0.6 0.8
      softmax 0 0
0.5 0.5
      +/softmax 1 2 3
1
      mean ⍬
1
