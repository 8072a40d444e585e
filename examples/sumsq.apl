⍝ Sum of squares: arrc build examples/sumsq.apl -o sumsq.spv
{+/⍵×⍵}
