/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package virtualmachine

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// desired is everything the spec asks of Proxmox.
type desired struct {
	Spec pve.VMSpec
	Node string
	// Source is the template's name in clone mode; "" creates from scratch.
	Source    string
	FullClone bool
	// CloneStorage receives a full clone's disks ("" = the template's).
	CloneStorage string

	User     string
	Password *guest.CloudInitPassword

	// Running: a stopped guest is started; Stopped: a running guest is shut
	// down (gracefully, then stopped after ShutdownTimeout seconds).
	Running         bool
	Stopped         bool
	ShutdownTimeout int
	AllowReboot     bool
}

// secrets are the values of the spec that no message may carry.
func (d desired) secrets() []string {
	if d.Password == nil {
		return nil
	}
	return []string{d.Password.Value}
}

// desiredFrom reads the spec (and the passwordFrom Secret: from the API
// server when its resourceVersion moved, from the memo otherwise) into what
// the controller compares.
func desiredFrom(ctx context.Context, memo *secrets.Memo, cr *v1alpha1.VirtualMachine) (desired, error) {
	s := &cr.Spec
	d := desired{
		Spec:            pve.VMSpec{Config: SpecFields.Values(s), AdditionalConfig: s.AdditionalConfig},
		Node:            s.NodeName,
		FullClone:       s.IsFullClone(),
		Running:         s.KeepsRunning(s.AutoStart()),
		Stopped:         s.KeepsStopped(),
		ShutdownTimeout: s.ShutdownTimeout(),
		AllowReboot:     s.MayReboot(),
	}
	if s.IsClone() {
		d.Source = s.Template.Name
	}
	if hw := s.Hardware(); hw != nil {
		hardwareInto(&d.Spec, hw)
		if s.IsClone() && len(hw.Disk) > 0 {
			d.CloneStorage = hw.Disk[0].Storage
		}
	}
	if s.VMSpec != nil && s.VMSpec.OSImage != nil {
		d.Spec.OSImageDevice, d.Spec.OSImageVolume = s.VMSpec.OSImage.Name, s.VMSpec.OSImage.Value
	}
	if ci := s.CloudInit(); ci != nil {
		d.Spec.CloudInit = guest.CloudInitOf(ci)
		d.User = ci.User
		pw, err := guest.CloudInitPasswordOf(ctx, memo, cr, ci)
		if err != nil {
			return desired{}, err
		}
		d.Password = pw
	}
	return d, nil
}

// The VirtualMachine's field tables: each row maps an API field to the
// PVE key pve.QEMUFields (or pve.QEMUNICFields) knows the codec, default
// and apply mode of. Desired state and imports both come from them.
var (
	// SpecFields are read from the spec itself.
	SpecFields = guest.Fields{
		{Path: "name", Key: "name"},
		{Path: "tags", Key: "tags"},
		{Path: "onboot", Key: "onboot"},
	}
	// HardwareFields are read from template or vmSpec.
	HardwareFields = guest.Fields{
		{Path: "cores", Key: "cores"},
		{Path: "socket", Key: "sockets"},
		{Path: "memory", Key: "memory"},
		{Path: "cpu", Key: "cpu"},
		{Path: "numa", Key: "numa"},
		{Path: "balloon", Key: "balloon"},
	}
	// NetworkFields are the options of each network interface (netN).
	NetworkFields = guest.Fields{
		{Path: "bridge", Key: "bridge"},
		{Path: "tag", Key: "tag"},
		{Path: "firewall", Key: "firewall"},
		{Path: "macaddr", Key: "macaddr"},
		{Path: "mtu", Key: "mtu"},
	}
	// PCIFields are the options of each passed-through PCI device
	// (hostpciN) but its ID, whose key its type picks (see pciOptions).
	PCIFields = guest.Fields{
		{Path: "pcie", Key: "pcie"},
		{Path: "primaryGPU", Key: "x-vga"},
	}
)

func hardwareInto(s *pve.VMSpec, hw *v1alpha1.VirtualMachineHardware) {
	maps.Copy(s.Config, HardwareFields.Values(hw))
	if len(hw.Disk) > 0 {
		s.Disks = make(map[string]pve.VMDisk, len(hw.Disk))
		for _, disk := range hw.Disk {
			s.Disks[disk.Device] = pve.VMDisk{Storage: disk.Storage, SizeGB: int(disk.Size)}
		}
	}
	for i := range hw.Network {
		s.NICs = append(s.NICs, pve.VMNIC{Model: hw.Network[i].Model, Options: NetworkFields.Values(&hw.Network[i])})
	}
	for i := range hw.PCIDevices {
		s.PCIDevices = append(s.PCIDevices, pciOptions(&hw.PCIDevices[i]))
	}
}

// pciOptions are a PCI device's hostpciN options: its rows, and the device
// ID under the key its type names (a mapping's name, or the host address
// that is the value's default key).
func pciOptions(p *v1alpha1.PCIDevice) map[string]any {
	opts := PCIFields.Values(p)
	idKey := "host"
	if p.Type == v1alpha1.PCIDeviceTypeMapped {
		idKey = "mapping"
	}
	opts[idKey] = p.DeviceID
	return opts
}

// Imported fills spec (its own fields and vmSpec) with what describes a
// guest as it is (pve.ImportedSpec): desiredFrom turns it back into the
// same VMSpec, so a resource made from it asks for no change.
func Imported(s pve.VMSpec, spec *v1alpha1.VirtualMachineSpec) {
	SpecFields.Fill(spec, s.Config)
	hw := v1alpha1.VirtualMachineHardware{}
	HardwareFields.Fill(&hw, s.Config)
	for _, dev := range slices.Sorted(maps.Keys(s.Disks)) {
		d := s.Disks[dev]
		hw.Disk = append(hw.Disk, v1alpha1.VirtualMachineDisk{Device: dev, Storage: d.Storage, Size: int32(d.SizeGB)}) //nolint:gosec // PVE's limits are far below int32
	}
	for _, n := range s.NICs {
		nic := v1alpha1.VirtualMachineNetwork{Model: n.Model}
		NetworkFields.Fill(&nic, n.Options)
		hw.Network = append(hw.Network, nic)
	}
	spec.VMSpec = &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: hw}
}

// lateInit fills the fields spec leaves unset with the guest's values (cfg
// read as pve.ImportedSpec reads it, through the same tables), and reports
// whether it set any. A hardware section or NIC the spec lacks is not made.
func lateInit(spec *v1alpha1.VirtualMachineSpec, cfg pve.GuestConfig) bool {
	is := pve.ImportedSpec(cfg)
	set := SpecFields.LateInit(spec, is.Config)
	hw := spec.Hardware()
	if hw == nil {
		return set
	}
	set = HardwareFields.LateInit(hw, is.Config) || set
	for i := range min(len(hw.Network), len(is.NICs)) {
		set = NetworkFields.LateInit(&hw.Network[i], is.NICs[i].Options) || set
	}
	return set
}

// passwordNeedsApply reports whether the password must be written again: a
// new generation (inline) or a new Secret revision (passwordFrom).
func passwordNeedsApply(cr *v1alpha1.VirtualMachine, pw *guest.CloudInitPassword) bool {
	if pw == nil {
		return false
	}
	applied := cr.Status.CloudInitPasswordApplied
	if applied == nil {
		return true
	}
	if pw.Version.SecretResourceVersion != "" {
		return applied.SecretResourceVersion != pw.Version.SecretResourceVersion
	}
	return applied.Generation != pw.Version.Generation
}

// prerequisites are what must exist on the node before the VM is created: the
// storages of a scratch VM's disks (a clone's come from its template) or of
// a full clone's target, the OS image volume, every NIC's bridge, and the
// cloud-init snippets (PVE takes any volume ID in cicustom and reads the
// file only when it builds the drive, at start).
func (d desired) prerequisites() pve.Prerequisites {
	p := pve.Prerequisites{Node: d.Node}
	if d.Source == "" {
		for _, dev := range slices.Sorted(maps.Keys(d.Spec.Disks)) {
			p.DiskStorages = appendNew(p.DiskStorages, d.Spec.Disks[dev].Storage)
		}
	}
	if d.FullClone {
		p.DiskStorages = appendNew(p.DiskStorages, d.CloneStorage)
	}
	if vol, _, _ := strings.Cut(d.Spec.OSImageVolume, ","); strings.Contains(vol, ":") {
		p.Volumes = append(p.Volumes, vol)
	}
	for _, n := range d.Spec.NICs {
		p.Bridges = appendNew(p.Bridges, n.Bridge())
	}
	p.Volumes = append(p.Volumes, d.Spec.CloudInit.CustomVolumes()...)
	return p
}

// appendNew appends s unless it is empty or listed.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
