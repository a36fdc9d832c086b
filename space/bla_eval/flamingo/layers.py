"""The Flamingo blocks (Alayrac et al. 2022) as OpenFlamingo 2.0.1 defines them: the Perceiver
resampler over a vision tower's patch tokens, and the gated cross-attention block put before a
language model's decoder layer, each text token attending to the latents of the image its last
``<image>`` token stands for. Parameter names are upstream's, so a released checkpoint's keys
name these modules (``bla_eval.flamingo.checkpoint``)."""

from __future__ import annotations

import torch
from torch import nn

HEAD_DIM = 64
HEADS = 8
FF_MULT = 4
PERCEIVER_DEPTH = 6
LATENTS = 64


class FeedForward(nn.Sequential):
    """LayerNorm, Linear, GELU, Linear (upstream's ``FeedForward``: keys ``0``, ``1``, ``3``)."""

    def __init__(self, dim: int, mult: int = FF_MULT) -> None:
        inner = int(dim * mult)
        super().__init__(
            nn.LayerNorm(dim),
            nn.Linear(dim, inner, bias=False),
            nn.GELU(),
            nn.Linear(inner, dim, bias=False),
        )


def heads_first(x: torch.Tensor, heads: int) -> torch.Tensor:
    """``(..., n, heads * d)`` -> ``(..., heads, n, d)`` with the head axis after the batch
    axes but one (upstream's ``b t n (h d) -> b h t n d`` for 4-d inputs, ``b n (h d) -> b h n
    d`` for 3-d)."""
    *lead, n, width = x.shape
    x = x.reshape(*lead, n, heads, width // heads)
    if len(lead) == 2:  # (b, t, n, h, d) -> (b, h, t, n, d)
        return x.permute(0, 3, 1, 2, 4)
    return x.permute(0, 2, 1, 3)  # (b, n, h, d) -> (b, h, n, d)


def heads_last(x: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`heads_first`: heads joined back into the feature axis."""
    if x.dim() == 5:  # (b, h, t, n, d) -> (b, t, n, h * d)
        b, h, t, n, d = x.shape
        return x.permute(0, 2, 3, 1, 4).reshape(b, t, n, h * d)
    b, h, n, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(b, n, h * d)


class PerceiverAttention(nn.Module):
    """Latents attend to the image tokens and to themselves."""

    def __init__(self, dim: int, dim_head: int = HEAD_DIM, heads: int = HEADS) -> None:
        super().__init__()
        self.scale = dim_head**-0.5
        self.heads = heads
        inner = dim_head * heads
        self.norm_media = nn.LayerNorm(dim)
        self.norm_latents = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(self, x: torch.Tensor, latents: torch.Tensor) -> torch.Tensor:
        """``x``: (b, T, n1, D) image tokens; ``latents``: (b, T, n2, D)."""
        x = self.norm_media(x)
        latents = self.norm_latents(latents)
        q = self.to_q(latents)
        k, v = self.to_kv(torch.cat((x, latents), dim=-2)).chunk(2, dim=-1)
        q, k, v = (heads_first(t, self.heads) for t in (q, k, v))
        q = q * self.scale
        sim = torch.einsum("... i d, ... j d -> ... i j", q, k)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        out = torch.einsum("... i j, ... j d -> ... i d", sim.softmax(dim=-1), v)
        return self.to_out(heads_last(out))


class PerceiverResampler(nn.Module):
    """A fixed number of latents per image from its patch tokens (no frame or media-time
    embeddings: OpenFlamingo leaves them out)."""

    def __init__(
        self,
        dim: int,
        depth: int = PERCEIVER_DEPTH,
        dim_head: int = HEAD_DIM,
        heads: int = HEADS,
        num_latents: int = LATENTS,
        ff_mult: int = FF_MULT,
    ) -> None:
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, dim))
        self.layers = nn.ModuleList(
            nn.ModuleList([PerceiverAttention(dim, dim_head, heads), FeedForward(dim, ff_mult)])
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: (b, T, F, v, D) tokens of T images of F frames -> (b, T, latents, D)."""
        b, t, f, v, d = x.shape
        x = x.reshape(b, t, f * v, d)
        latents = self.latents.expand(b, t, *self.latents.shape)
        for attn, ff in self.layers:
            latents = attn(x, latents) + latents
            latents = ff(latents) + latents
        return self.norm(latents)


class MaskedCrossAttention(nn.Module):
    """Text tokens attend to the latents of the image of their media time (the count of
    ``<image>`` tokens up to them): text before any image attends to none."""

    def __init__(
        self, dim: int, dim_visual: int, dim_head: int = HEAD_DIM, heads: int = HEADS
    ) -> None:
        super().__init__()
        self.scale = dim_head**-0.5
        self.heads = heads
        inner = dim_head * heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim_visual, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(
        self, x: torch.Tensor, media: torch.Tensor, text_time: torch.Tensor
    ) -> torch.Tensor:
        """``x``: (B, L, D) text; ``media``: (B, T, n, Dv) latents; ``text_time``: (B, L), the
        1-based image each token follows (0: none)."""
        _, images, n = media.shape[:3]
        q = self.to_q(self.norm(x))
        k, v = self.to_kv(media.reshape(media.shape[0], images * n, -1)).chunk(2, dim=-1)
        q, k, v = (heads_first(t, self.heads) for t in (q, k, v))
        q = q * self.scale
        sim = torch.einsum("... i d, ... j d -> ... i j", q, k)
        media_time = torch.arange(images, device=x.device).repeat_interleave(n) + 1
        allowed = text_time[:, None, :, None] == media_time[None, None, None, :]
        sim = sim.masked_fill(~allowed, -torch.finfo(sim.dtype).max)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)
        attn = attn.masked_fill((text_time == 0)[:, None, :, None], 0.0)
        out = torch.einsum("... i j, ... j d -> ... i d", attn, v)
        return self.to_out(heads_last(out))


class GatedCrossAttentionBlock(nn.Module):
    """Cross-attention and a feed-forward layer, each added through a tanh gate (zero at the
    start of training: the language model unchanged)."""

    def __init__(
        self,
        dim: int,
        dim_visual: int,
        dim_head: int = HEAD_DIM,
        heads: int = HEADS,
        ff_mult: int = FF_MULT,
    ) -> None:
        super().__init__()
        self.attn = MaskedCrossAttention(dim, dim_visual, dim_head, heads)
        self.attn_gate = nn.Parameter(torch.tensor([0.0]))
        self.ff = FeedForward(dim, ff_mult)
        self.ff_gate = nn.Parameter(torch.tensor([0.0]))

    def forward(
        self, x: torch.Tensor, media: torch.Tensor, text_time: torch.Tensor
    ) -> torch.Tensor:
        x = self.attn(x, media, text_time) * self.attn_gate.tanh() + x
        return self.ff(x) * self.ff_gate.tanh() + x
