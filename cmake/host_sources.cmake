# The sources of gpupeer that need neither nvcc nor the CUDA headers nor the CUDA runtime: the
# parsers, the KB, the snapshot reader, the doctor's rules, the topology, report and explain
# renderers and the pure planning code. One list for the two builds made of them alone: the
# build without CUDA (GPUPEER_WITH_CUDA=OFF, cmake/without_cuda.cmake) and the sanitized and
# fuzzing build (tests/host_only), which is also CI's build without CUDA. The build with CUDA
# compiles them with everything else under src/.
get_filename_component(GPUPEER_HOST_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(GPUPEER_HOST_SOURCES
  bench/bench_pure.cpp bench/bench_render.cpp check/check_report.cpp core/fd_passing.cpp check/ipc_report.cpp
  check/pattern.cpp
  collectives/ce_chunks.cpp collectives/ce_issuer.cpp collectives/chain_plan.cpp collectives/collective_algo.cpp
  collectives/collective_types.cpp collectives/line128_rules.cpp collectives/line_grid.cpp collectives/one_shot_step_rules.cpp
  collectives/pull_plan.cpp collectives/ring_plan.cpp collectives/tuning_variables.cpp
  core/bounded_input.cpp core/cpulist.cpp core/error_kb.cpp core/hex.cpp core/log.cpp core/host_identity.cpp core/output_file.cpp core/program_files.cpp core/random_bytes.cpp core/status.cpp
  core/sweep_progress.cpp core/terminal_text.cpp
  ranks/bootstrap.cpp ranks/call_signature.cpp ranks/fd_exchange.cpp ranks/socket_io.cpp ranks/zero_copy_rules.cpp
  doctor/doctor.cpp doctor/doctor_render.cpp doctor/rules_container.cpp doctor/rules_env.cpp doctor/rules_links.cpp doctor/rules_p2p.cpp doctor/rules_peers.cpp doctor/rules_perf.cpp
  doctor/rules_platform.cpp doctor/rules_versions.cpp
  explain/api_error_code.cpp explain/explain.cpp explain/query_lookup.cpp
  kb/json_schema.cpp kb/kb_entry_json.cpp kb/kb_load.cpp kb/kb_matcher.cpp kb/kb_render.cpp
  kb/knowledge_base.cpp kb/line_batches.cpp kb/log_lines.cpp kb/literal_scan.cpp kb/regex_literals.cpp probe/why_no_gpu.cpp
  report/findings_html.cpp report/html_text.cpp report/matrices_html.cpp report/report_page.cpp report/results_html.cpp
  report/banner_html.cpp report/link_states.cpp report/measured_from_results.cpp report/results_load.cpp report/svg_chart.cpp report/topology_svg.cpp
  snapshot/snapshot.cpp snapshot/snapshot_json.cpp snapshot/snapshot_summary.cpp snapshot/version_text.cpp
  topology/link_limit.cpp topology/p2p_status.cpp topology/pci_path.cpp
  topology/topology_report.cpp transfer/path_choice.cpp)
list(TRANSFORM GPUPEER_HOST_SOURCES PREPEND "${GPUPEER_HOST_ROOT}/src/")
# The host reference of the collectives, which the tools and the tests share (tools/harness).
list(APPEND GPUPEER_HOST_SOURCES ${GPUPEER_HOST_ROOT}/tools/harness/collective_reference.cpp)
# explain's tool-output parsers: every one is host code.
file(GLOB GPUPEER_TOOL_OUTPUT_SOURCES CONFIGURE_DEPENDS ${GPUPEER_HOST_ROOT}/src/tool_output/*.cpp)
list(APPEND GPUPEER_HOST_SOURCES ${GPUPEER_TOOL_OUTPUT_SOURCES})
# In place of the code that reads and drives the GPUs: the same functions saying that this
# build cannot (builtWithCuda() is false). Files named *without_cuda.cpp are the build with
# CUDA's to leave out.
list(APPEND GPUPEER_HOST_SOURCES ${GPUPEER_HOST_ROOT}/src/core/without_cuda.cpp)

# The gpupeer tool without CUDA: the subcommands that work from files (doctor, topo, snapshot
# and report on --snapshot FILE; explain), and the GPU subcommands by name, each saying that
# it needs a GPU build (exit 3).
set(GPUPEER_OFFLINE_CLI_SOURCES main.cpp cli_output.cpp doctor_command.cpp explain_command.cpp report_command.cpp
  snapshot_command.cpp topo_command.cpp gpu_commands_without_cuda.cpp)
list(TRANSFORM GPUPEER_OFFLINE_CLI_SOURCES PREPEND "${GPUPEER_HOST_ROOT}/tools/gpupeer/")

# The CPU unit tests (tests/unit/<name>.cpp) whose code is all in these sources. Not a cache
# entry, so that a test added here reaches build folders configured before it.
set(GPUPEER_HOST_TESTS
  ce_chunks_test ce_issuer_test chain_plan_test collective_algo_test collective_reference_test
  collective_types_test core_test cpulist_test doctor_rules_test kb_data_test kb_loader_test
  kb_match_test kb_schema_test line_grid_test pci_path_test pull_plan_test ring_plan_test
  snapshot_json_test topology_fixture_test transfer_path_test bad_input_test fuzz_regression_test
  bootstrap_test doctor_container_rules_test tool_output_test kb_literals_test call_signature_test
  kb_scan_threads_test zero_copy_rules_test version_text_test output_file_test doctor_fixes_test
  terminal_text_test sweep_progress_test tuning_variables_test fd_exchange_test)
# The CLI tests of the subcommands that work from files; they run the tool without CUDA.
set(GPUPEER_OFFLINE_CLI_TESTS kb_explain_cli_test kb_location_cli_test output_file_cli_test)

# libgpupeer_c.so without CUDA: the diagnosis entries, the GPU ones as stand-ins that say why.
# The sanitized build links them into its tests, so a missing stand-in fails CI.
set(GPUPEER_WITHOUT_CUDA_C_SOURCES src/c_api/c_api_error.cpp src/c_api/c_api_enums.cpp
  src/c_api/c_api_collective.cpp src/c_api/c_api_diagnosis.cpp src/c_api/c_api_without_cuda.cpp)
