# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 实验 6：DDP 扩展效率（lab06）
#
# > 对应第 1 章（扩展效率的定义）、第 14 章（计算通信重叠）与第 24 章（分布式训练框架配置）。有 GPU 时在 1 → 2 → 4 张卡上
# > 训练同一个小模型；没有 GPU 时（CPU 路径）在 1 → 2 个 gloo 进程上运行，并明确标注。
#
# ## 实验目标
#
# - 以**弱扩展**（每个 rank 的 batch 固定）测量 DDP 的吞吐，计算扩展效率
#   $$E(N) = \frac{\text{samples/s}(N)}{N \cdot \text{samples/s}(1)}$$
# - 用 `model.no_sync()` 把同一步在「不做梯度 all-reduce」时的耗时也测出来，二者之差就是**暴露在外的通信时间**；
# - 检查 DDP 的正确性：同步训练若干步后，所有副本的参数必须逐位相同。
#
# 在 GPU 集群上第 1 章的经验值是：千卡规模能做到 70% 已属优秀。这里的小模型在 CPU 上只有几十万参数，
# 2 个进程还要争抢同一台机器的 2 个核——效率低于 100% 的原因和 GPU 集群不同，读数时请记住这一点。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import labs
from labutil.bench.ddp import scaling_efficiency
from labutil.explore import bench as bench_fig

rng = setup()
ranks = [1, 2, 4] if labs.gpu_count() >= 4 else ([1, 2] if labs.gpu_count() >= 2 or labs.gpu_count() == 0 else [1])
print("backend:", labs.backend(), "| ranks to measure:", ranks)

# %% [markdown]
# ```bash
# torchrun --nproc-per-node=1 -m labutil.bench.ddp --out ddp1.json
# torchrun --nproc-per-node=2 -m labutil.bench.ddp --out ddp2.json
# ```

# %%
runs = [labs.run_ddp(n, hidden=256, layers=4, batch=64) for n in ranks]
for r in runs:
    print(f"{r['world_size']} rank(s): step {r['step_s'] * 1e3:.1f} ms, no_sync {r['step_s_no_sync'] * 1e3:.1f} ms, "
          f"exposed comm {r['comm_s_per_step'] * 1e3:.1f} ms, {r['samples_per_s']:.0f} samples/s")

# %%
# NBVAL_CHECK_OUTPUT
print("ranks measured:", [r["world_size"] for r in runs])
print("replicas identical after synchronous steps:", all(r["replica_max_abs_diff"] == 0.0 for r in runs))
print("gradient bytes per step per rank:", runs[0]["grad_bytes"])

# %%
eff = scaling_efficiency(runs)
show_table([{"ranks": e["world_size"], "samples/s": e["samples_per_s"], "speedup": e["speedup"],
             "efficiency": f"{e['efficiency']:.0%}"} for e in eff])

# %%
bench_fig.scaling_figure(eff)

# %% [markdown]
# ## 思考
#
# - 梯度是 `grad_bytes` 字节（fp32），每步 all-reduce 一次。按第 13 章的环形模型，通信时间约为
#   $2(n-1)/n \cdot S / B + 2(n-1)\alpha$；用 lab02 拟合出的 α、B 代入，和这里测到的「暴露通信时间」比一比。
# - DDP 把梯度分成 25 MB 的桶（`bucket_cap_mb`），反向传播时算完一个桶就开始 all-reduce，通信与计算重叠；
#   模型太小（只有一个桶）时没有可重叠的计算，通信完全暴露——这也是小模型扩展效率差的原因。
# - 在 4 卡机器上重跑：如果 2 → 4 卡时效率骤降，回到 lab01 看 `nvidia-smi topo -m`，多半是跨 CPU socket（SYS）的 PCIe 路径。
