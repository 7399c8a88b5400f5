"""The PyTorch side of the `train_mlp` example: the same MLP archive, data shape and optimizer
settings, timed per step (compare with the example's "µs per step"); with --check ARCHIVE it
loads a module trained by the example and prints its parameters' statistics and output."""
import sys, time, torch

def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--check":
        m = torch.jit.load(sys.argv[2])
        x = torch.randn(4, 8)
        print("loaded", sys.argv[2], "params", sum(p.numel() for p in m.parameters()),
              "out", m(x).flatten().tolist())
        return
    archive, optim, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    torch.set_num_threads(threads)
    m = torch.jit.load(archive)
    torch.manual_seed(7)
    x = torch.randn(256, 8)
    w = torch.randn(8, 1)
    y = torch.sin(x @ w) + 0.1 * x[:, :1] ** 2
    opt = (torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) if optim == "sgd"
           else torch.optim.Adam(m.parameters(), lr=0.01))
    first = torch.nn.functional.mse_loss(m(x), y).item()
    t = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(m(x), y)
        loss.backward()
        opt.step()
    per = (time.perf_counter() - t) * 1e6 / steps
    print(f"torch {optim}: first {first:.6f} last {loss.item():.6f}; {per:.1f} µs per step "
          f"({threads} threads)")

main()
