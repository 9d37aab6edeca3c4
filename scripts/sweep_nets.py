"""sweep_nets.py - networks built from torch.nn for scripts/model_sweep.py, in the shape of model families
that torchvision and torchaudio do not ship: a GPT-2-style causal decoder with its KV cache as graph
inputs, a T5-style encoder-decoder (relative position bias, RMS norm, bool attention mask), a small
diffusion U-Net (GroupNorm, SiLU, nearest upsampling, self-attention, sinusoidal timestep embedding)
and a YOLO-style detector (strided-slice Focus stem, CSP blocks, SPPF, upsampling neck, grid decode).

Each constructor takes no arguments and returns an nn.Module in the state torch.manual_seed left it;
model_sweep.py seeds, calls it and exports it. Sizes are small (a few MB of weights): these nets exist
to exercise the graph patterns, not to be fast to compare.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F


class GPT2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, past_k, past_v):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        p = k.shape[2] - t  # new token i sees the cache and new tokens 0..i
        mask = torch.arange(p + t)[None, :] <= torch.arange(t)[:, None] + p  # not tril: opset 11 has no Trilu
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        s = s.masked_fill(~mask, float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, k, v


class GPT2KV(nn.Module):
    """(input_ids int64 [B, T], past_k, past_v float [L, B, H, P, D/H]) -> (logits, present_k, present_v)
    with present = past then this step's keys / values (P + T long)."""

    def __init__(self, vocab=1000, d=128, heads=4, layers=2, ctx=64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(GPT2Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, ids, past_k, past_v):
        p, t = past_k.shape[3], ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(p, p + t, device=ids.device))
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past_k[i], past_v[i])
            ks.append(k)
            vs.append(v)
        return self.ln(x) @ self.wte.weight.t(), torch.stack(ks), torch.stack(vs)


class T5Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return self.w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class T5Attention(nn.Module):
    def __init__(self, d, heads, relative=False, causal=False, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.causal, self.buckets, self.max_distance = heads, causal, buckets, max_distance
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.rel = nn.Embedding(buckets, heads) if relative else None

    def bucket(self, rel):
        """T5's bucket of each relative position (memory - query): exact near 0, logarithmic beyond."""
        n, ret = self.buckets, 0
        if not self.causal:
            n //= 2
            ret = (rel > 0).long() * n
            rel = rel.abs()
        else:
            rel = -torch.min(rel, torch.zeros_like(rel))
        exact = n // 2
        large = exact + (torch.log(rel.float() / exact) / math.log(self.max_distance / exact)
                         * (n - exact)).long()
        large = torch.min(large, torch.full_like(large, n - 1))
        return ret + torch.where(rel < exact, rel, large)

    def bias(self, tq, tk):
        rel = torch.arange(tk)[None, :] - torch.arange(tq)[:, None]
        return self.rel(self.bucket(rel)).permute(2, 0, 1)[None]  # [1, H, tq, tk]

    def forward(self, x, mem, bias, mask):
        b, tq, d = x.shape
        tk = mem.shape[1]
        h = self.heads
        q = self.q(x).view(b, tq, h, d // h).transpose(1, 2)
        k = self.k(mem).view(b, tk, h, d // h).transpose(1, 2)
        v = self.v(mem).view(b, tk, h, d // h).transpose(1, 2)
        s = q @ k.transpose(-1, -2) + bias  # T5 does not scale by 1/sqrt(d)
        if mask is not None:
            s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
        return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, tq, d))


class T5Layer(nn.Module):
    def __init__(self, d, heads, ffn, decoder, relative):
        super().__init__()
        self.decoder = decoder
        self.n1, self.n3 = T5Norm(d), T5Norm(d)
        self.self_attn = T5Attention(d, heads, relative=relative, causal=decoder)
        if decoder:
            self.n2, self.cross = T5Norm(d), T5Attention(d, heads)
        self.wi0, self.wi1, self.wo = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False), nn.Linear(ffn, d, bias=False)

    def forward(self, x, bias, mask, enc=None, enc_mask=None):
        h = self.n1(x)
        x = x + self.self_attn(h, h, bias, mask)
        if self.decoder:
            x = x + self.cross(self.n2(x), enc, 0.0, enc_mask)
        h = self.n3(x)
        return x + self.wo(F.gelu(self.wi0(h), approximate="tanh") * self.wi1(h))  # gated-GELU FFN (T5 v1.1)


class T5Small(nn.Module):
    """(input_ids int64 [B, S], attention_mask bool [B, S], decoder_input_ids int64 [B, T]) -> logits
    [B, T, vocab]. Relative position bias computed by the first layer of each stack and shared."""

    def __init__(self, vocab=1000, d=128, heads=4, ffn=256, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.ModuleList(T5Layer(d, heads, ffn, False, i == 0) for i in range(layers))
        self.dec = nn.ModuleList(T5Layer(d, heads, ffn, True, i == 0) for i in range(layers))
        self.enc_norm, self.dec_norm = T5Norm(d), T5Norm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, mask, dec_ids):
        s, t = ids.shape[1], dec_ids.shape[1]
        key_mask = mask[:, None, None, :]  # [B, 1, 1, S]
        x = self.emb(ids)
        bias = self.enc[0].self_attn.bias(s, s)
        for layer in self.enc:
            x = layer(x, bias, key_mask)
        enc = self.enc_norm(x)
        y = self.emb(dec_ids)
        causal = torch.ones(t, t, dtype=torch.bool).tril()[None, None]
        bias = self.dec[0].self_attn.bias(t, t)
        for layer in self.dec:
            y = layer(y, bias, causal, enc, key_mask)
        return self.head(self.dec_norm(y) * (y.shape[-1] ** -0.5))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(t))[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class AttnBlock(nn.Module):
    def __init__(self, c, heads=4):
        super().__init__()
        self.norm = nn.GroupNorm(32, c)
        self.attn = nn.MultiheadAttention(c, heads, batch_first=True)

    def forward(self, x):
        b, c, h, w = x.shape
        y = self.norm(x).flatten(2).transpose(1, 2)
        y = self.attn(y, y, y, need_weights=False)[0]
        return x + y.transpose(1, 2).reshape(b, c, h, w)


class UNet(nn.Module):
    """(latent [B, 4, H, W], timestep float [B]) -> noise prediction [B, 4, H, W]: a diffusers-like U-Net
    of two resolutions (64 and 128 channels), attention at the lower one and in the middle."""

    def __init__(self, cin=4, ch=(64, 128), temb=128):
        super().__init__()
        self.temb = temb
        self.t1, self.t2 = nn.Linear(temb, temb * 2), nn.Linear(temb * 2, temb * 2)
        self.conv_in = nn.Conv2d(cin, ch[0], 3, padding=1)
        self.down0 = ResBlock(ch[0], ch[0], temb * 2)
        self.pool = nn.Conv2d(ch[0], ch[0], 3, stride=2, padding=1)
        self.down1, self.attn1 = ResBlock(ch[0], ch[1], temb * 2), AttnBlock(ch[1])
        self.mid1, self.mid_attn, self.mid2 = ResBlock(ch[1], ch[1], temb * 2), AttnBlock(ch[1]), ResBlock(ch[1], ch[1], temb * 2)
        self.up1, self.up_attn = ResBlock(ch[1] * 2, ch[1], temb * 2), AttnBlock(ch[1])
        self.up_conv = nn.Conv2d(ch[1], ch[1], 3, padding=1)
        self.up0 = ResBlock(ch[1] + ch[0], ch[0], temb * 2)
        self.norm_out, self.conv_out = nn.GroupNorm(32, ch[0]), nn.Conv2d(ch[0], cin, 3, padding=1)

    def forward(self, x, t):
        half = self.temb // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        e = t[:, None] * freqs[None]
        e = self.t2(F.silu(self.t1(torch.cat([e.sin(), e.cos()], dim=1))))
        h0 = self.down0(self.conv_in(x), e)
        h1 = self.attn1(self.down1(self.pool(h0), e))
        m = self.mid2(self.mid_attn(self.mid1(h1, e)), e)
        u = self.up_attn(self.up1(torch.cat([m, h1], dim=1), e))
        u = self.up_conv(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.up0(torch.cat([u, h0], dim=1), e)
        return self.conv_out(F.silu(self.norm_out(u)))


def conv_bn(cin, cout, k=1, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class C3(nn.Module):
    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        c = cout // 2
        self.a, self.b, self.out = conv_bn(cin, c), conv_bn(cin, c), conv_bn(2 * c, cout)
        self.m = nn.ModuleList(nn.Sequential(conv_bn(c, c), conv_bn(c, c, 3)) for _ in range(n))
        self.shortcut = shortcut

    def forward(self, x):
        y = self.a(x)
        for m in self.m:
            y = y + m(y) if self.shortcut else m(y)
        return self.out(torch.cat([y, self.b(x)], dim=1))


class YOLO(nn.Module):
    """image [B, 3, H, W] -> [B, N, 5 + classes] (xywh in pixels, objectness, class scores), YOLOv5's
    layout at a small width: Focus stem (four strided slices), CSP backbone, SPPF, FPN/PAN neck with
    nearest upsampling and concats, three detection scales decoded against their grids and anchors."""

    ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))

    def __init__(self, classes=20, w=16):
        super().__init__()
        self.no = classes + 5
        self.stem = conv_bn(12, w, 3)
        self.b1 = nn.Sequential(conv_bn(w, 2 * w, 3, 2), C3(2 * w, 2 * w))
        self.b2 = nn.Sequential(conv_bn(2 * w, 4 * w, 3, 2), C3(4 * w, 4 * w, 2))  # stride 8
        self.b3 = nn.Sequential(conv_bn(4 * w, 8 * w, 3, 2), C3(8 * w, 8 * w, 2))  # stride 16
        self.b4 = nn.Sequential(conv_bn(8 * w, 16 * w, 3, 2), C3(16 * w, 16 * w))  # stride 32
        self.sppf_a, self.sppf_b = conv_bn(16 * w, 8 * w), conv_bn(32 * w, 16 * w)
        self.lat4, self.top3 = conv_bn(16 * w, 8 * w), C3(16 * w, 8 * w, shortcut=False)
        self.lat3, self.top2 = conv_bn(8 * w, 4 * w), C3(8 * w, 4 * w, shortcut=False)
        self.down2, self.pan3 = conv_bn(4 * w, 4 * w, 3, 2), C3(8 * w, 8 * w, shortcut=False)
        self.down3, self.pan4 = conv_bn(8 * w, 8 * w, 3, 2), C3(16 * w, 16 * w, shortcut=False)
        self.heads = nn.ModuleList(nn.Conv2d(c, 3 * self.no, 1) for c in (4 * w, 8 * w, 16 * w))

    def forward(self, x):
        x = self.stem(torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1))
        p3 = self.b2(self.b1(x))
        p4 = self.b3(p3)
        y = self.sppf_a(self.b4(p4))
        y1 = F.max_pool2d(y, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        p5 = self.sppf_b(torch.cat([y, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))
        l4 = self.lat4(p5)
        t3 = self.top3(torch.cat([F.interpolate(l4, scale_factor=2.0, mode="nearest"), p4], 1))
        l3 = self.lat3(t3)
        o3 = self.top2(torch.cat([F.interpolate(l3, scale_factor=2.0, mode="nearest"), p3], 1))
        o4 = self.pan3(torch.cat([self.down2(o3), l3], 1))
        o5 = self.pan4(torch.cat([self.down3(o4), l4], 1))
        outs = []
        for i, (o, stride) in enumerate(((o3, 8), (o4, 16), (o5, 32))):
            b, _, h, w = o.shape
            p = self.heads[i](o).view(b, 3, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
            gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2).float()
            anchor = torch.tensor(self.ANCHORS[i], dtype=torch.float32).view(1, 3, 1, 1, 2)
            xy = (p[..., 0:2] * 2 - 0.5 + grid) * stride
            wh = (p[..., 2:4] * 2) ** 2 * anchor
            outs.append(torch.cat([xy, wh, p[..., 4:]], -1).view(b, -1, self.no))
        return torch.cat(outs, 1)
