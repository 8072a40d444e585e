x←⍳10 ⍝ the first ten
