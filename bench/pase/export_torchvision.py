"""Exports torchvision AlexNet (224x224) or InceptionV3 (299x299, no
auxiliary head) with random weights and the given batch to NAME.onnx in the
current directory: the graphs of the PaSE paper's Table I."""
import sys, torch, torchvision
torch.manual_seed(0)
name, batch = sys.argv[1], int(sys.argv[2])
if name == "alexnet":
    m = torchvision.models.alexnet(); x = torch.randn(batch, 3, 224, 224)
elif name == "inception_v3":
    m = torchvision.models.inception_v3(aux_logits=False, init_weights=False); x = torch.randn(batch, 3, 299, 299)
m.eval()
torch.onnx.export(m, (x,), f"{name}.onnx", opset_version=13, input_names=["x"], output_names=["y"])
