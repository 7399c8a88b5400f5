# A scalar int loop: the interpreter's per-instruction overhead.
def scalar_loop(n: int) -> int:
    acc = 0
    for i in range(n):
        if i % 3 == 0:
            acc += i
        else:
            acc -= 1
    return acc
