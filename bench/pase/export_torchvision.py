"""Exports torchvision AlexNet (224x224) or InceptionV3 (299x299, no
auxiliary head) with random weights, or a WMT-sized nn.Transformer
(transformer: base model, 6 + 6 layers, width 512, 8 heads, feed-forward
2048, vocabulary 32000, source and target length 64; weights exported as
graph inputs, not stored), with the given batch to NAME.onnx in the current
directory: the graphs of the PaSE paper's Table I.

Every parameter and batch-norm statistic is perturbed before the export:
freshly initialized models hold many equal tensors (zero biases, unit
norm scales, the identical copies nn.TransformerEncoder makes of its
layer, every batch norm folded to the same bias), and the exporter merges
equal tensors into one, so one weight would serve dozens of ops. A trained
model shares none of them, and on a training step each shared weight's
gradient sum joins all its readers."""
import sys, torch, torchvision
torch.manual_seed(0)


def unshare(m):
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            if t.is_floating_point():
                t.add_(torch.rand_like(t) * 1e-2)
name, batch = sys.argv[1], int(sys.argv[2])
if name == "alexnet":
    m = torchvision.models.alexnet(); x = torch.randn(batch, 3, 224, 224)
elif name == "inception_v3":
    m = torchvision.models.inception_v3(aux_logits=False, init_weights=False); x = torch.randn(batch, 3, 299, 299)
elif name == "transformer":
    class Seq2Seq(torch.nn.Module):
        def __init__(self, vocab=32000, d=512):
            super().__init__()
            self.src = torch.nn.Embedding(vocab, d)
            self.tgt = torch.nn.Embedding(vocab, d)
            self.core = torch.nn.Transformer(d, 8, 6, 6, 2048, dropout=0.0, batch_first=True)
            self.out = torch.nn.Linear(d, vocab)
        def forward(self, src, tgt):
            return self.out(self.core(self.src(src), self.tgt(tgt)))
    m = Seq2Seq()
    unshare(m)
    x = (torch.randint(0, 32000, (batch, 64)), torch.randint(0, 32000, (batch, 64)))
    m.eval()
    torch.onnx.export(m, x, f"{name}.onnx", opset_version=13, input_names=["src", "tgt"],
                      output_names=["y"], export_params=False)
    sys.exit(0)
unshare(m)
m.eval()
torch.onnx.export(m, (x,), f"{name}.onnx", opset_version=13, input_names=["x"], output_names=["y"])
