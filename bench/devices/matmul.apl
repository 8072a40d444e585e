C←A+.×B
