"""Storage, checkpoint and data-loading models (labutil.storage, labutil.dataloading, labutil.fioparse)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labutil import dataloading as dl
from labutil import fioparse, storage
from labutil.units import BYTES_PER_GIB

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


# -- validation against published numbers ---------------------------------------------------------
def test_bloom_checkpoint_sizes_match_bigscience_summary():
    # BigScience "BLOOM 176B" training summary: "only the bf16 weights are 329GB, the full checkpoint
    # with optimizer states is 2.3TB". 176,247,271,424 params (BLOOM paper, arXiv 2211.05100 / model card).
    # The figures are binary units as `du -h` prints them (rounded up).
    n = 176_247_271_424
    weights_gib = storage.checkpoint_gb(n, optimizer="none") * 1e9 / BYTES_PER_GIB
    full_tib = storage.checkpoint_gb(n) * 1e9 / 2**40
    assert math.ceil(weights_gib) == 329
    assert math.ceil(full_tib * 10) / 10 == pytest.approx(2.3)


def test_gpt3_full_checkpoint_is_2_1_to_2_5_tb():
    # ZeRO §3.1: mixed-precision Adam keeps K = 12 B/param of optimizer state (+2 B bf16 weights).
    assert storage.checkpoint_gb(175e9) == pytest.approx(2450.0)
    assert storage.checkpoint_gb(175e9, include_model_weights=False) == pytest.approx(2100.0)
    assert storage.checkpoint_gb(175e9, optimizer="none") == pytest.approx(350.0)


def test_hundreds_of_gb_range_is_7b_to_70b():
    # seed 003: "单次保存可达数百GB" -> 100..1000 GB full checkpoints are 7.1B..71B params.
    lo = storage.params_for_checkpoint_gb(100.0)
    hi = storage.params_for_checkpoint_gb(1000.0)
    assert lo == pytest.approx(100e9 / 14)
    assert hi == pytest.approx(1000e9 / 14)
    assert 100 < storage.checkpoint_gb(13e9) < 1000 and 100 < storage.checkpoint_gb(70e9) < 1000


def test_pcie_rates():
    # PCI-SIG: Gen4 16 GT/s, Gen5 32 GT/s, 128b/130b encoding.
    assert storage.pcie_gbs(4, 4) == pytest.approx(7.877, rel=1e-3)
    assert storage.pcie_gbs(5, 16) == pytest.approx(63.02, rel=1e-3)
    assert storage.pcie_gbs(3, 16) == pytest.approx(15.75, rel=1e-3)
    # no reference Gen4 x4 SSD may exceed its link
    assert storage.media("nvme-gen4").read_gbs < storage.pcie_gbs(4, 4)
    assert storage.media("nvme-gen5").read_gbs < storage.pcie_gbs(5, 4)


def test_resnet50_imagenet_read_demand():
    # 1,024 A100 at 2,470 img/s (NVIDIA DeepLearningExamples) of 107.7 kB mean JPEG (ImageNet tar 138 GB).
    req = storage.data_read_requirements(1024 * dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES)
    assert req.read_gbs == pytest.approx(1024 * 2470 * 138e9 / 1_281_167 / 1e9)
    assert req.files_per_s == pytest.approx(1024 * 2470)
    assert req.metadata_ops_per_s == pytest.approx(2 * 1024 * 2470)
    packed = storage.data_read_requirements(1024 * 2470, dl.IMAGENET_MEAN_JPEG_BYTES, file_bytes=1e9)
    assert packed.read_gbs == pytest.approx(req.read_gbs)
    assert packed.files_per_s < req.files_per_s / 9000


def test_llm_rates_are_tiny():
    # 70B on H100 (989.4 dense BF16 TFLOP/s) at 40 % MFU: 0.4*989.4e12/(6*70e9) = 942 tokens/s.
    t = dl.llm_tokens_per_s_per_gpu(70e9, 989.4, 0.4)
    assert t == pytest.approx(0.4 * 989.4e12 / (6 * 70e9))
    assert dl.llm_samples_per_s(t, 4096) == pytest.approx(t / 4096)
    assert dl.token_bytes(50257) == 2 and dl.token_bytes(128256) == 4


def test_device_throughput_iops_bound():
    hdd = storage.media("hdd-20tb")
    # HDD: positioning (1/IOPS) and transfer (io/seq) are serial -- 4 KiB: ~0.69 MB/s; 1 MiB: 38 % of sequential
    assert storage.device_throughput_gbs("hdd-20tb", 4096) == pytest.approx(4096e-9 / (1 / 168 + 4096e-9 / 0.285))
    assert storage.device_throughput_gbs("hdd-20tb", 4096) == pytest.approx(168 * 4096 / 1e9, rel=0.01)
    assert storage.mixed_efficiency("hdd-20tb", 1 << 20) == pytest.approx(0.382, abs=0.002)
    assert 0.9 * hdd.read_gbs < storage.device_throughput_gbs("hdd-20tb", 1 << 30) < hdd.read_gbs
    assert storage.device_throughput_gbs("nvme-gen4", 4096) == pytest.approx(1.45e6 * 4096 / 1e9)
    assert storage.device_throughput_gbs("PM1733", 1 << 20, pattern="sequential", op="write") == 3.8


# -- checkpoint write, async ----------------------------------------------------------------------
def test_write_time_saturates_at_fs_bandwidth():
    t = storage.checkpoint_write_s(1000.0, 200.0, n_writers=np.array([1, 10, 100, 1000]), per_writer_gbs=2.0)
    assert t == pytest.approx([500.0, 50.0, 5.0, 5.0])
    assert storage.checkpoint_write_s(1000.0, 200.0) == pytest.approx(5.0)
    assert storage.checkpoint_write_s(1000.0, 200.0, latency_s=1.5) == pytest.approx(6.5)


def test_async_blocks_only_for_host_copy():
    sync = storage.checkpoint_save(980.0, 100.0, n_writers=64, per_writer_gbs=2.0)
    asy = storage.checkpoint_save(980.0, 100.0, n_writers=64, per_writer_gbs=2.0, async_save=True,
                                  d2h_gbs_per_writer=25.0)
    assert sync.blocking_s == pytest.approx(980 / 100) and sync.background_s == 0
    assert asy.blocking_s == pytest.approx(980 / 64 / 25.0)
    assert asy.background_s == pytest.approx(sync.write_s)
    assert asy.host_buffer_gb_per_writer == pytest.approx(980 / 64)
    assert asy.overhead_fraction(1800) < sync.overhead_fraction(1800) / 10


def test_overhead_counts_background_longer_than_interval():
    # a 300 s background write with a save every 100 s makes each save wait 200 s more
    f = storage.checkpoint_overhead_fraction(1.0, 100.0, background_s=300.0)
    assert f == pytest.approx(201.0 / 301.0)
    assert storage.checkpoint_overhead_fraction(10.0, 90.0) == pytest.approx(0.1)


# -- read/write interference ----------------------------------------------------------------------
def test_shared_pool_stall_formula():
    res = storage.read_write_interference(80.0, 100.0, 1000.0, 1800.0, prefetch_s=2.0, read_weight=0.5)
    r = 50.0
    burst = 1000.0 / (100.0 - r)
    stall = ((80.0 - r) * burst - 2.0 * 80.0) / 80.0
    assert res.shared_read_gbs == pytest.approx(r)
    assert res.shared_burst_s == pytest.approx(burst)
    assert res.shared_stall_s == pytest.approx(stall)
    assert res.read_slowdown == pytest.approx(1.6)
    assert res.separate_stall_s == 0.0 and res.separate_burst_s == pytest.approx(10.0)


def test_interference_hidden_by_enough_prefetch_and_mixed_efficiency_hurts():
    a = storage.read_write_interference(80.0, 100.0, 1000.0, 1800.0, prefetch_s=1000.0)
    assert a.shared_stall_s == 0.0
    b = storage.read_write_interference(40.0, 100.0, 1000.0, 1800.0, mixed_efficiency=1.0)
    c = storage.read_write_interference(40.0, 100.0, 1000.0, 1800.0, mixed_efficiency=0.6)
    assert b.shared_stall_s == 0.0 < c.shared_stall_s


# -- tier planner -----------------------------------------------------------------------------------
def test_server_bandwidth_is_min_of_drives_and_nics():
    s = storage.server_spec("nvme-pfs-2u")
    assert s.read_gbs == pytest.approx(min(24 * 6.4 * 0.8, 2 * 400 / 8))
    assert s.write_gbs == pytest.approx(min(24 * 3.8 * 0.8, 100.0))
    h = storage.server_spec("hdd-pfs-4u")
    assert h.read_gbs == pytest.approx(60 * 0.285 * 0.8)


def test_plan_tiers_counts():
    plan = storage.plan_tiers(300.0, 2.45, 400.0, 500.0, checkpoints_kept=3)
    hot = plan.tier("hot")
    s = storage.server_spec("nvme-pfs-2u")
    assert hot.servers_for_bandwidth == math.ceil(400.0 / s.read_gbs)
    assert hot.servers_for_capacity == math.ceil(300.0 / (s.usable_tb * 0.8))
    assert hot.servers == max(hot.servers_for_bandwidth, hot.servers_for_capacity)
    assert hot.provided_gbs >= 400.0 and hot.usable_tb * 0.8 >= 300.0
    ck = plan.tier("checkpoint")
    assert ck.limited_by == "bandwidth" and ck.provided_gbs >= 500.0
    cold = plan.tier("cold")
    assert cold.capacity_needed_tb == pytest.approx(300.0 + 2.45 * 10)
    assert len(plan.rows()) == 3
    with pytest.raises(KeyError):
        plan.tier("warm")


# -- data pipeline ----------------------------------------------------------------------------------
def test_pipeline_bottleneck_and_cores():
    r = dl.pipeline_throughput(2470.0, 107e3, cpu_cores_per_gpu=8, decode_samples_per_s_per_core=150.0,
                               read_gbs_per_gpu=1.0, iops_per_gpu=50_000, decoded_sample_bytes=dl.DECODED_224_BYTES)
    assert r.bottleneck == "cpu_decode"
    assert r.throughput_samples_per_s == pytest.approx(7 * 150.0)
    assert r.gpu_utilization == pytest.approx(1050 / 2470)
    assert r.cores_needed_per_gpu == pytest.approx(2470 / 150 + 1)
    r2 = dl.pipeline_throughput(2470.0, 107e3, cpu_cores_per_gpu=32, decode_samples_per_s_per_core=150.0,
                                read_gbs_per_gpu=0.1)
    assert r2.bottleneck == "storage_bw" and r2.throughput_samples_per_s == pytest.approx(0.1e9 / 107e3)


def test_pipeline_iops_stage_small_files():
    # 4 KiB samples one per file: each costs one request; packed 64 MiB shards: 64 requests per 16,384 samples
    small = dl.pipeline_throughput(1e5, 4096, cpu_cores_per_gpu=64, decode_samples_per_s_per_core=1e5,
                                   read_gbs_per_gpu=10.0, iops_per_gpu=20_000)
    assert small.bottleneck == "storage_iops" and small.throughput_samples_per_s == pytest.approx(20_000)
    packed = dl.pipeline_throughput(1e5, 4096, cpu_cores_per_gpu=64, decode_samples_per_s_per_core=1e5,
                                    read_gbs_per_gpu=10.0, iops_per_gpu=20_000, file_bytes=64 << 20)
    assert packed.capacities["storage_iops"] == pytest.approx(20_000 * 16384 / 64)


def test_pipeline_vectorised_matches_scalar():
    cores = np.array([2, 8, 16, 32])
    v = dl.pipeline_throughput(2470.0, 107e3, cpu_cores_per_gpu=cores, decode_samples_per_s_per_core=150.0,
                               read_gbs_per_gpu=2.0)
    for i, c in enumerate(cores):
        s = dl.pipeline_throughput(2470.0, 107e3, cpu_cores_per_gpu=int(c), decode_samples_per_s_per_core=150.0,
                                   read_gbs_per_gpu=2.0)
        assert v.throughput_samples_per_s[i] == pytest.approx(s.throughput_samples_per_s)
        assert v.bottleneck[i] == s.bottleneck


def test_prefetch_and_ram():
    assert dl.prefetch_buffer_s(8, 2, 256, 2470.0) == pytest.approx(8 * 2 * 256 / 2470)
    ram = dl.host_ram_per_gpu_gb(checkpoint_gb=980.0, n_gpus=8, num_workers=8, prefetch_factor=2, batch_size=256)
    assert ram == pytest.approx(980 / 8 + 8 * 2 * 256 * 150528 / 1e9)


# -- property tests ----------------------------------------------------------------------------------
@given(size=pos, bw=pos, n=st.integers(1, 5000), pw=pos, k=st.integers(1, 100))
def test_more_writers_never_slower(size, bw, n, pw, k):
    t1 = storage.checkpoint_write_s(size, bw, n, pw)
    assert storage.checkpoint_write_s(size, bw, n + k, pw) <= t1 + 1e-12
    assert storage.checkpoint_write_s(size, bw * 2, n, pw) <= t1 + 1e-12
    assert storage.checkpoint_write_s(size, bw, n, pw * 2) <= t1 + 1e-12
    assert t1 >= 0 and math.isfinite(t1)


@given(rate=pos, sb=pos, fb=st.none() | pos, f=st.floats(1.0, 100.0))
def test_more_samples_never_need_less(rate, sb, fb, f):
    a = storage.data_read_requirements(rate, sb, fb)
    b = storage.data_read_requirements(rate * f, sb, fb)
    assert b.read_gbs >= a.read_gbs and b.read_iops >= a.read_iops and b.files_per_s >= a.files_per_s


@given(R=st.floats(0.1, 99.0), extra=st.floats(0.1, 500.0), S=st.floats(0.0, 1e4), P=st.floats(0.0, 60.0))
def test_interference_never_negative_and_monotone_in_size(R, extra, S, P):
    B = R + extra
    a = storage.read_write_interference(R, B, S, 600.0, prefetch_s=P)
    b = storage.read_write_interference(R, B, S * 2 + 1, 600.0, prefetch_s=P)
    assert 0.0 <= a.shared_stall_s <= b.shared_stall_s
    assert a.shared_read_gbs <= R and 0 <= a.shared_stall_fraction < 1


@given(cores=st.floats(0.0, 256.0), per=st.floats(1.0, 1e4), g=st.floats(1.0, 1e5))
def test_pipeline_never_exceeds_any_stage(cores, per, g):
    r = dl.pipeline_throughput(g, 1e5, cpu_cores_per_gpu=cores, decode_samples_per_s_per_core=per,
                               read_gbs_per_gpu=1.0, iops_per_gpu=1e4)
    assert 0.0 <= r.throughput_samples_per_s <= min(r.capacities.values()) + 1e-9
    assert 0.0 <= r.gpu_utilization <= 1.0


# -- bad input -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: storage.checkpoint_gb(-1), "params"),
    (lambda: storage.checkpoint_gb(float("nan")), "params"),
    (lambda: storage.checkpoint_gb(1e9, optimizer="lion"), "optimizer"),
    (lambda: storage.checkpoint_gb(1e9, precision="int4"), "precision"),
    (lambda: storage.checkpoint_write_s(10, 0), "write_gbs"),
    (lambda: storage.checkpoint_write_s(10, 5, n_writers=0), "n_writers"),
    (lambda: storage.checkpoint_write_s(10, 5, per_writer_gbs=-1), "per_writer_gbs"),
    (lambda: storage.checkpoint_overhead_fraction(1, 0), "interval_s"),
    (lambda: storage.read_write_interference(120, 100, 10, 60), "read_gbs"),
    (lambda: storage.read_write_interference(10, 100, 10, 60, mixed_efficiency=0), "mixed_efficiency"),
    (lambda: storage.data_read_requirements(0, 1), "samples_per_s"),
    (lambda: storage.plan_tiers(-1, 1, 1, 1), "dataset_tb"),
    (lambda: storage.pcie_gbs(2), "gen"),
    (lambda: dl.pipeline_throughput(1, 1, cpu_cores_per_gpu=-1, decode_samples_per_s_per_core=1,
                                    read_gbs_per_gpu=1), "cpu_cores_per_gpu"),
    (lambda: dl.llm_tokens_per_s_per_gpu(1e9, 100, 1.5), "mfu"),
])
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_unknown_catalog_names():
    with pytest.raises(KeyError, match="nvme-gen4"):
        storage.media("nvme-gen9")
    with pytest.raises(KeyError):
        storage.server_spec("tape")
    with pytest.raises(KeyError):
        storage.plan_tiers(1, 1, 1, 1, compute_server="DGX-Z")


# -- parsers ---------------------------------------------------------------------------------------------
def test_fio_json_sample():
    (job,) = fioparse.parse_fio_json(fioparse.sample("fio_ckpt_json"))
    assert job.jobname == "ckpt-write"
    assert job.write_gbs == pytest.approx(18.35) and job.read_gbs == 0
    assert job.write_iops == pytest.approx(18.35e9 / (4 << 20))
    assert job.write_clat_p99_us == pytest.approx(9109.504)
    # Little's law: 16 jobs x iodepth 1 outstanding = IOPS x mean latency
    assert job.write_iops * job.write_clat_mean_us * 1e-6 == pytest.approx(16, rel=0.02)


def test_fio_text_sample():
    jobs = {j.jobname: j for j in fioparse.parse_fio_summary(fioparse.sample("fio_nvme_text"))}
    assert jobs["seqwrite"].write_gbs == pytest.approx(3532 * 2**20 / 1e9)
    assert jobs["randread"].read_iops == pytest.approx(1.012e6)
    assert jobs["randread"].read_gbs == pytest.approx(3953 * 2**20 / 1e9)
    # IOPS x 4 KiB = bandwidth, within the rounding fio applies
    assert jobs["randread"].read_iops * 4096 / 1e9 == pytest.approx(jobs["randread"].read_gbs, rel=2e-3)


def test_dd_and_lfs_samples():
    dd = fioparse.parse_dd(fioparse.sample("dd_direct"))
    assert dd.bytes == 10 * 2**30 and dd.gbs == pytest.approx(10 * 2**30 / 3.0532 / 1e9)
    df = fioparse.parse_lfs_df(fioparse.sample("lfs_df_h"))
    assert len(df.osts) == 4 and len(df.mdts) == 1
    assert df.summary.use_pct == 63
    assert df.ost_imbalance == pytest.approx(90 - (54 + 53 + 90 + 54) / 4)
    assert sum(t.used_bytes for t in df.osts) == pytest.approx(df.summary.used_bytes, rel=1e-3)
    assert all(fioparse.sample_source(n) for n in fioparse.sample_names())


@pytest.mark.parametrize("parser", [fioparse.parse_fio_json, fioparse.parse_fio_summary, fioparse.parse_dd,
                                    fioparse.parse_lfs_df])
@pytest.mark.parametrize("garbage", ["", "hello world", "{\"jobs\": []}", "UUID x\nfoo bar", "\x00\xff{]"])
def test_parsers_raise_one_clear_error(parser, garbage):
    with pytest.raises(fioparse.StorageParseError):
        parser(garbage)


@given(st.text(max_size=300))
def test_parsers_never_crash_on_random_text(text):
    for parser in (fioparse.parse_fio_json, fioparse.parse_fio_summary, fioparse.parse_dd, fioparse.parse_lfs_df):
        try:
            parser(text)
        except fioparse.StorageParseError:
            pass


def test_fio_json_bad_field():
    with pytest.raises(fioparse.StorageParseError, match="bw_bytes|iops"):
        fioparse.parse_fio_json('{"jobs": [{"jobname": "x", "read": {"bw_bytes": "fast"}, "write": {}}]}')
