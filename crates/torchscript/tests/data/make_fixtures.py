# Regenerates the fixtures of this folder with PyTorch (run from crates/torchscript/tests).
import torch, torch.nn as nn, warnings
warnings.simplefilter("ignore")
torch.manual_seed(0)
class AddRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.5, -0.5]))
    def forward(self, x):
        return torch.relu(x + self.bias)
torch.jit.script(AddRelu()).save("data/add_relu.pt")
class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)
    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = self.pool(x).flatten(1)
        return self.fc(x)
torch.jit.script(TinyNet().eval()).save("data/tiny_cnn.pt")
class Raises(nn.Module):
    def forward(self, x):
        if bool(x.sum() < 0):
            raise ValueError("negative input")
        return x * 2
torch.jit.script(Raises()).save("data/raises.pt")
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 1)
    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)
torch.jit.script(Mlp()).save("data/mlp.pt")
