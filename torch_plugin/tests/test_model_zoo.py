"""Third-party model code on hal: Hugging Face `transformers`, unchanged.

Each model is built on the CPU from a small config with random weights
(nothing loads from a hub), copied, and the copy moved with `.to("hal")`. Both
train the same few steps on the same batch; the hal run is under HAL_STRICT=1,
so any op without a hal kernel fails the test by name. After the first
backward the gradients must agree with CPU, and after the last step the
parameters, within RTOL relative (‖hal − cpu‖ / ‖cpu‖ per tensor). Causal LMs
then greedy-`generate()` with their KV cache, and hal must give CPU's tokens.

The optimizer is SGD with momentum: Adam divides by the gradient's own
magnitude, so it would blow the rounding noise of a gradient that is zero in
exact arithmetic up to full-size updates that differ between any two devices
(Adam on hal is covered by test_parity.py). Dropout is off (the two devices'
generators draw different masks). The time
ratio hal/CPU of the training steps, torch on one thread, is printed at the
end of the run (conftest.py).
"""
import copy
import time

import pytest
import torch

transformers = pytest.importorskip(
    "transformers", reason="the model zoo needs Hugging Face transformers "
    "(scripts/requirements.txt)")

from conftest import strict_mode  # noqa: E402

RTOL = 1e-4
FLOOR = 1e-3
STEPS = 3
BATCH = 2
SEQ = 12
VOCAB = 96
NEW_TOKENS = 6
SEED = 0

# Model name -> hal time / CPU time of its training steps, for the summary.
TIME_RATIOS = {}


def _text_batch(labels_like_input=True):
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(3, VOCAB, (BATCH, SEQ), generator=g)
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    mask[1, -3:] = 0  # a padded row: the attention mask matters
    batch = {"input_ids": ids, "attention_mask": mask}
    if labels_like_input:
        batch["labels"] = ids.clone()
    return batch


def _gpt2():
    config = transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2,
                                     n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
                                     attn_pdrop=0.0, bos_token_id=1, eos_token_id=2,
                                     pad_token_id=0)
    return transformers.GPT2LMHeadModel(config), _text_batch()


def _llama():
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64,
                                      bos_token_id=1, eos_token_id=2, pad_token_id=0,
                                      tie_word_embeddings=True)
    return transformers.LlamaForCausalLM(config), _text_batch()


def _bert():
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=64,
                                     max_position_embeddings=64, hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0, pad_token_id=0)
    batch = _text_batch()
    batch["labels"][:, ::2] = -100  # masked-LM: only some positions are scored
    return transformers.BertForMaskedLM(config), batch


def _t5():
    config = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                   num_decoder_layers=2, num_heads=4, dropout_rate=0.0,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=2)
    batch = _text_batch()
    batch["labels"] = batch["labels"][:, : SEQ // 2].contiguous()
    return transformers.T5ForConditionalGeneration(config), batch


def _vit():
    config = transformers.ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                                    num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=64, num_labels=5, hidden_dropout_prob=0.0,
                                    attention_probs_dropout_prob=0.0)
    g = torch.Generator().manual_seed(SEED)
    batch = {"pixel_values": torch.randn(BATCH, 3, 16, 16, generator=g),
             "labels": torch.randint(0, 5, (BATCH,), generator=g)}
    return transformers.ViTForImageClassification(config), batch


def _resnet():
    config = transformers.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
                                       depths=[1, 1], layer_type="basic", num_labels=5)
    g = torch.Generator().manual_seed(SEED)
    batch = {"pixel_values": torch.randn(BATCH, 3, 32, 32, generator=g),
             "labels": torch.randint(0, 5, (BATCH,), generator=g)}
    return transformers.ResNetForImageClassification(config), batch


MODELS = {"gpt2": _gpt2, "llama": _llama, "bert": _bert, "t5": _t5, "vit": _vit,
          "resnet": _resnet}
CAUSAL_LMS = ("gpt2", "llama")


def _build(name):
    torch.manual_seed(SEED)
    model, batch = MODELS[name]()
    model.train()
    return model, batch


def _assert_close_tensors(actual, expected, what):
    """‖a − e‖ / ‖e‖ <= RTOL for every tensor, where a norm below FLOOR of the
    largest one counts as that floor: some gradients are zero in exact
    arithmetic (an attention key's bias: softmax ignores a shift of all
    scores) and hold only rounding noise on either device."""
    norms = {k: expected[k].detach().double().norm().item() for k in expected}
    floor = FLOOR * max(norms.values(), default=0.0)

    def relative_error(k):
        difference = actual[k].detach().cpu().double() - expected[k].detach().double()
        return difference.norm().item() / max(norms[k], floor, 1e-30)

    worst = max(((relative_error(k), k) for k in expected), default=(0.0, None))
    assert worst[0] <= RTOL, f"{what}: {worst[1]} differs from CPU by {worst[0]:.2e} (relative)"


def _train(model, batch, device):
    """STEPS SGD steps; returns the first step's gradients and the seconds taken."""
    batch = {k: v.to(device) for k, v in batch.items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first_gradients = None
    start = time.perf_counter()
    for _ in range(STEPS):
        optimizer.zero_grad()
        model(**batch).loss.backward()
        if first_gradients is None:
            first_gradients = {n: p.grad.detach().cpu().clone()
                               for n, p in model.named_parameters() if p.grad is not None}
        optimizer.step()
    if device != "cpu":
        torch.hal.synchronize()
    return first_gradients, time.perf_counter() - start


@pytest.fixture
def one_cpu_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.mark.parametrize("name", list(MODELS))
def test_training_matches_cpu(name, one_cpu_thread):
    cpu_model, batch = _build(name)
    hal_model = copy.deepcopy(cpu_model).to("hal")
    cpu_gradients, cpu_seconds = _train(cpu_model, batch, "cpu")
    with strict_mode():
        hal_gradients, hal_seconds = _train(hal_model, batch, "hal")
    TIME_RATIOS[name] = hal_seconds / cpu_seconds
    assert hal_gradients.keys() == cpu_gradients.keys()
    _assert_close_tensors(hal_gradients, cpu_gradients, f"{name} first-step gradient")
    _assert_close_tensors(dict(hal_model.named_parameters()),
                          dict(cpu_model.named_parameters()),
                          f"{name} parameter after {STEPS} steps")


@pytest.mark.parametrize("name", CAUSAL_LMS)
def test_greedy_generation_matches_cpu(name):
    cpu_model, batch = _build(name)
    cpu_model.eval()
    hal_model = copy.deepcopy(cpu_model).to("hal")
    prompt = batch["input_ids"][:, :4]
    settings = dict(max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True,
                    pad_token_id=0)
    with torch.no_grad():
        expected = cpu_model.generate(prompt, **settings)
        with strict_mode():
            actual = hal_model.generate(prompt.to("hal"), **settings)
    assert actual.device.type == "hal"
    assert torch.equal(actual.cpu(), expected)
    assert expected.shape[1] == prompt.shape[1] + NEW_TOKENS


def test_tied_embeddings_stay_tied_on_hal():
    model, _ = _build("gpt2")
    model.to("hal")
    assert model.lm_head.weight is model.transformer.wte.weight
