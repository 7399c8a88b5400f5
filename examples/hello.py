# A small TorchScript program: run it with
#   cargo run --release -p tsrs -- run examples/hello.py --entry main
from typing import List


def fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def normalize(x: Tensor) -> Tensor:
    return (x - x.mean()) / x.std()


def main(n: int = 10) -> Tuple[List[int], Tensor]:
    fibs = [fib(i) for i in range(n)]
    x = torch.tensor(fibs, dtype=torch.float32)
    return fibs, normalize(x)
