# SPDX-License-Identifier: GPL-2.0-or-later
# The unit tests (cmocka) of the core, the simulator and the device
# models; included by Makefile.am.  Each is one program of %D%/ named
# after the claims it checks.  They link the library's convenience copy
# whole (lib/libsmartio-core.la: every symbol visible, nothing compiled a
# second time) and cmocka: LDADD and the cmocka flags are set once here;
# a program elsewhere that needs neither says so with an LDADD of its own.
LDADD = lib/libsmartio-core.la $(CMOCKA_LIBS)
AM_CPPFLAGS += $(CMOCKA_CFLAGS)

check_PROGRAMS = \
	%D%/test_proto %D%/test_topology_parse %D%/test_alloc \
	%D%/test_registry_check %D%/test_lending %D%/test_datapath \
	%D%/test_multiprocess %D%/test_peer_messages %D%/test_repair \
	%D%/test_peer_trust %D%/test_registry_race %D%/test_borrow_check \
	%D%/test_fabric_dir %D%/test_requester_tables %D%/test_sizing \
	%D%/test_switch_paths %D%/test_multipath %D%/test_link_pacing \
	%D%/test_separate_lending %D%/test_sriov %D%/test_multicast \
	%D%/test_fabric_open %D%/test_node_share %D%/test_open_reasons \
	%D%/test_node_loss_events %D%/test_lend_event_names_nodes \
	%D%/test_library_acts_for_any_node %D%/test_cmd_table \
	%D%/test_reg_read_abi
%C%_test_library_acts_for_any_node_SOURCES = \
	%D%/test_library_acts_for_any_node.c %D%/harness.h %D%/harness.c
%C%_test_reg_read_abi_SOURCES = %D%/test_reg_read_abi.c %D%/harness.h \
	%D%/harness.c
%C%_test_cmd_table_SOURCES = %D%/test_cmd_table.c %D%/harness.h %D%/harness.c
%C%_test_lend_event_names_nodes_SOURCES = %D%/test_lend_event_names_nodes.c \
	%D%/harness.h %D%/harness.c
%C%_test_open_reasons_SOURCES = %D%/test_open_reasons.c %D%/harness.h %D%/harness.c
%C%_test_node_loss_events_SOURCES = %D%/test_node_loss_events.c %D%/harness.h \
	%D%/harness.c
%C%_test_sriov_SOURCES = %D%/test_sriov.c %D%/harness.h %D%/harness.c
%C%_test_multicast_SOURCES = %D%/test_multicast.c %D%/harness.h %D%/harness.c
%C%_test_separate_lending_SOURCES = %D%/test_separate_lending.c
%C%_test_proto_SOURCES = %D%/test_proto.c
%C%_test_topology_parse_SOURCES = %D%/test_topology_parse.c
%C%_test_alloc_SOURCES = %D%/test_alloc.c
%C%_test_registry_check_SOURCES = %D%/test_registry_check.c
%C%_test_lending_SOURCES = %D%/test_lending.c %D%/harness.h %D%/harness.c
%C%_test_datapath_SOURCES = %D%/test_datapath.c %D%/harness.h %D%/harness.c
%C%_test_multiprocess_SOURCES = %D%/test_multiprocess.c %D%/harness.h \
	%D%/harness.c
%C%_test_peer_messages_SOURCES = %D%/test_peer_messages.c %D%/harness.h \
	%D%/harness.c
%C%_test_repair_SOURCES = %D%/test_repair.c %D%/harness.h %D%/harness.c
%C%_test_peer_trust_SOURCES = %D%/test_peer_trust.c %D%/peer_state.h \
	%D%/harness.h %D%/harness.c
%C%_test_registry_race_SOURCES = %D%/test_registry_race.c %D%/harness.h \
	%D%/harness.c
%C%_test_borrow_check_SOURCES = %D%/test_borrow_check.c %D%/harness.h \
	%D%/harness.c
%C%_test_fabric_open_SOURCES = %D%/test_fabric_open.c %D%/harness.h \
	%D%/harness.c
%C%_test_node_share_SOURCES = %D%/test_node_share.c %D%/harness.h \
	%D%/harness.c
%C%_test_fabric_dir_SOURCES = %D%/test_fabric_dir.c %D%/harness.h \
	%D%/harness.c
%C%_test_requester_tables_SOURCES = %D%/test_requester_tables.c \
	%D%/harness.h %D%/harness.c
%C%_test_sizing_SOURCES = %D%/test_sizing.c %D%/harness.h %D%/harness.c
%C%_test_switch_paths_SOURCES = %D%/test_switch_paths.c %D%/harness.h \
	%D%/harness.c
%C%_test_multipath_SOURCES = %D%/test_multipath.c %D%/harness.h \
	%D%/harness.c
%C%_test_link_pacing_SOURCES = %D%/test_link_pacing.c %D%/harness.h \
	%D%/harness.c
%C%_test_registry_race_LDADD = $(LDADD) -lpthread

# Device models (DEVICE_SOURCES) driven through libsmartio.
DEVICE_TESTS = \
	%D%/test_nvme_model %D%/test_dma_model %D%/test_nvme_shared \
	%D%/test_peer_model %D%/test_nvme_failover %D%/test_interrupt_remap
check_PROGRAMS += $(DEVICE_TESTS)
%C%_test_nvme_model_SOURCES = %D%/test_nvme_model.c %D%/harness.h \
	%D%/harness.c
%C%_test_dma_model_SOURCES = %D%/test_dma_model.c %D%/harness.h \
	%D%/harness.c
%C%_test_nvme_shared_SOURCES = %D%/test_nvme_shared.c %D%/harness.h \
	%D%/harness.c
%C%_test_peer_model_SOURCES = %D%/test_peer_model.c %D%/harness.h \
	%D%/harness.c
%C%_test_interrupt_remap_SOURCES = %D%/test_interrupt_remap.c \
	%D%/harness.h %D%/harness.c
%C%_test_nvme_failover_SOURCES = %D%/test_nvme_failover.c %D%/harness.h \
	%D%/harness.c
