n←67108864 ⍝ small: n←1000
⍝ A chain of statements over resident arrays (issue 15's table): i32 ⍳, i64 products.
x←⍳n
y←x×2
z←y+1
+/z
